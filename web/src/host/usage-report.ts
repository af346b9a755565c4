/**
 * What the Usage screen asks for and how it words the answer: the range of days (this
 * month, the last 30 days, or a custom from–to) in the team's time zone, the names of a
 * row's agent, provider or member, and its cost, which reads "no price" when the host has
 * none (never a guess).
 */

import type { UsageRow } from './usage-chart';

export type RangeChoice = { kind: 'month' } | { kind: 'last30' } | { kind: 'custom'; from: string; to: string };
export type Grouping = 'agent' | 'provider' | 'member';

export const GROUPINGS: ReadonlyArray<{ id: Grouping; name: string }> = [
  { id: 'agent', name: 'Agent' },
  { id: 'provider', name: 'Provider' },
  { id: 'member', name: 'Member' },
];

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The calendar day of `now` in `zone` (an IANA name), as YYYY-MM-DD; UTC when the zone is unknown. */
export function dayIn(zone: string, now: Date): string {
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' });
  } catch {
    format = new Intl.DateTimeFormat('en-CA', { timeZone: 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' });
  }
  const parts = Object.fromEntries(format.formatToParts(now).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}`;
}

/** `day` moved by `days` calendar days. */
export function addDays(day: string, days: number): string {
  const at = new Date(`${day}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/** The `from` and `to` a range asks for (none: the host's default, this month); null while a custom range is not a range. */
export function rangeArgs(range: RangeChoice, today: string): { from?: string; to?: string } | null {
  switch (range.kind) {
    case 'month':
      return { from: `${today.slice(0, 8)}01`, to: today };
    case 'last30':
      return { from: addDays(today, -29), to: today };
    case 'custom':
      return rangeProblem(range) === null ? { from: range.from, to: range.to } : null;
  }
}

/** Why a custom range cannot be asked for, or null. The host takes at most 400 days. */
export function rangeProblem(range: { from: string; to: string }): string | null {
  if (!DAY.test(range.from) || !DAY.test(range.to)) return 'Choose the first and the last day.';
  if (range.from > range.to) return 'The first day comes after the last.';
  if (addDays(range.from, 399) < range.to) return 'Choose at most 400 days.';
  return null;
}

/** Whole tokens with the reader's separators: 12,345. */
export function formatTokens(tokens: number): string {
  return tokens.toLocaleString('en-US');
}

/** A cost in the team's currency, to two places (four under one unit, where cents matter); "no price" for none. */
export function formatCost(cost: string | null, currency: string): string {
  if (cost === null) return 'no price';
  const value = Number(cost);
  if (!Number.isFinite(value)) return cost;
  const places = value !== 0 && Math.abs(value) < 1 ? 4 : 2;
  return `${value.toFixed(places)} ${currency}`;
}

/** A row's cost, saying when some of its requests had no price. */
export function rowCost(row: UsageRow, currency: string): string {
  const shown = formatCost(row.cost, currency);
  if (row.cost === null || row.unpricedRequests === 0) return shown;
  return `${shown} (+ ${row.unpricedRequests} ${row.unpricedRequests === 1 ? 'request' : 'requests'} with no price)`;
}

export interface Names {
  agents: ReadonlyMap<string, string>;
  members: ReadonlyMap<string, string>;
}

/** The name of a group's key value: an agent's or member's name, a provider's id. */
export function keyName(group: string, value: string, names: Names): string {
  if (group === 'agent') return value ? (names.agents.get(value) ?? 'A deleted agent') : 'No agent';
  if (group === 'member') return value ? (names.members.get(value) ?? 'A former member') : 'Routines (no member)';
  return value || 'None';
}
