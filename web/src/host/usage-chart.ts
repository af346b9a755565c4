/**
 * The Usage screen's chart as numbers: the days of a `usage-v1/series` answer stacked by
 * one key (agent, provider or member), a value scale with round ticks, and each bar's
 * place in pixels. The SVG component only draws what this module lays out.
 */

import type { RouteResult } from './protocol';

export type UsageAnswer = RouteResult<'usage-v1/series'>;
export type UsageRow = UsageAnswer['rows'][number];
export type Metric = 'cost' | 'tokens';

/** One row's value for the chart: its cost in the team's currency (unpriced counts 0), or all tokens. */
export function valueOf(row: UsageRow, metric: Metric): number {
  if (metric === 'tokens') return row.inputTokens + row.outputTokens;
  const cost = row.cost === null ? 0 : Number(row.cost);
  return Number.isFinite(cost) ? cost : 0;
}

export interface Stacks {
  days: string[];
  /** The stack keys, largest total first (the key '' is the series' empty day filler, left out). */
  keys: string[];
  /** `values[d][k]`: day `d`'s value of key `k`. */
  values: number[][];
}

/** The series' rows as days × keys; days in the answer's order, every day kept. */
export function stackDays(rows: readonly UsageRow[], metric: Metric, stackBy: string): Stacks {
  const days: string[] = [];
  const totals = new Map<string, number>();
  const cells = new Map<string, number>();
  for (const row of rows) {
    const day = row.key.day ?? '';
    if (!days.includes(day)) days.push(day);
    const key = row.key[stackBy] ?? '';
    const value = valueOf(row, metric);
    // A day with no use comes as one empty row: it makes the day, not a key.
    if (value === 0 && row.requests === 0) continue;
    totals.set(key, (totals.get(key) ?? 0) + value);
    cells.set(`${day}\n${key}`, (cells.get(`${day}\n${key}`) ?? 0) + value);
  }
  const keys = [...totals.keys()].sort((a, b) => totals.get(b)! - totals.get(a)! || a.localeCompare(b));
  const values = days.map((day) => keys.map((key) => cells.get(`${day}\n${key}`) ?? 0));
  return { days, keys, values };
}

/** Round tick values from 0 to at least `max`, about `count` steps (1, 2, 2.5 or 5 × 10^n apart). */
export function niceTicks(max: number, count = 4): number[] {
  if (!(max > 0) || !Number.isFinite(max)) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  const ticks: number[] = [];
  for (let i = 0; ; i++) {
    // Rounded so 0.1 + 0.2 reads 0.3.
    const tick = Number((i * step).toPrecision(12));
    ticks.push(tick);
    if (tick >= max) break;
  }
  return ticks;
}

export interface ChartSize {
  /** The narrowest the chart is drawn (a phone's width); more days make it wider. */
  minWidth: number;
  height: number;
  /** A day's column: its bar and the gap after it. */
  barWidth: number;
  gap: number;
  /** Room for the value labels on the left and the day labels below. */
  left: number;
  bottom: number;
  top: number;
}

export const CHART_SIZE: ChartSize = { minWidth: 320, height: 220, barWidth: 16, gap: 6, left: 56, bottom: 28, top: 8 };

export interface Segment {
  key: string;
  /** The key's place in `Stacks.keys` (its colour). */
  index: number;
  value: number;
  y: number;
  height: number;
}

export interface Bar {
  day: string;
  x: number;
  width: number;
  total: number;
  segments: Segment[];
  /** Whether the day's label is written under it (not every day fits). */
  labelled: boolean;
}

export interface ChartLayout {
  width: number;
  height: number;
  /** The plot's left edge: the value labels end there. */
  left: number;
  /** The plot's bottom edge (value 0) and top edge (the last tick). */
  baseline: number;
  top: number;
  ticks: Array<{ value: number; y: number }>;
  bars: Bar[];
}

/** Where each bar, segment and tick goes; segments stack up from the baseline in key order. */
export function layoutChart(stacks: Stacks, size: ChartSize = CHART_SIZE): ChartLayout {
  const column = size.barWidth + size.gap;
  const width = Math.max(size.minWidth, size.left + stacks.days.length * column + size.gap);
  const baseline = size.height - size.bottom;
  const totals = stacks.values.map((row) => row.reduce((sum, v) => sum + v, 0));
  const ticks = niceTicks(Math.max(0, ...totals));
  const scaleMax = ticks[ticks.length - 1]!;
  const plot = baseline - size.top;
  const yOf = (value: number) => baseline - (value / scaleMax) * plot;
  // A label every n days, so labels of about 40 px never touch.
  const every = Math.max(1, Math.ceil(40 / column));
  const bars = stacks.days.map((day, d) => {
    let below = 0;
    const segments: Segment[] = [];
    stacks.keys.forEach((key, index) => {
      const value = stacks.values[d]![index]!;
      if (value <= 0) return;
      const y = yOf(below + value);
      segments.push({ key, index, value, y, height: yOf(below) - y });
      below += value;
    });
    return { day, x: size.left + size.gap + d * column, width: size.barWidth, total: totals[d]!, segments, labelled: d % every === 0 };
  });
  return { width, height: size.height, left: size.left, baseline, top: size.top, ticks: ticks.map((value) => ({ value, y: yOf(value) })), bars };
}

/** Colours of the stacks, in order; a key past the last reuses them. */
export const STACK_COLOURS = ['#3b6fd4', '#e0823d', '#3aa675', '#b8509c', '#c9a227', '#5aa9c7', '#8a63d2', '#d2554f', '#7a8a99', '#4f7d3a'];

export function colourOf(index: number): string {
  return STACK_COLOURS[index % STACK_COLOURS.length]!;
}
