/**
 * Control of a tab between people: who holds it, in words, and the requests for it. A
 * member asks the holder (`browser-control-v1/request_control`); the holder hears
 * `browser-control-requested` and grants or dismisses; both hear how it ended
 * (`browser-control-request-resolved`). A request lapses after `expiresIn` seconds, counted
 * on this browser's clock from when it arrived (the host's clock may differ).
 */

import { EVENT, type TabView, type TeamApiEvent } from './protocol';

/** Account ids to the names members go by (from the hub's members list). */
export type MemberNames = ReadonlyMap<string, string>;

/** The person in control of a tab, as others read it: their name, else a stand-in. */
export function holderName(accountId: string, names: MemberNames): string {
  return names.get(accountId)?.trim() || 'Another member';
}

/** What a tab's row and view say of its holder, or null while nobody holds it. */
export function heldText(tab: Pick<TabView, 'heldBy' | 'heldByPerson'>, meId: string, names: MemberNames): string | null {
  if (!tab.heldByPerson) return null;
  if (tab.heldBy === meId) return 'You are in control';
  return `${tab.heldBy ? holderName(tab.heldBy, names) : 'Another member'} is in control`;
}

/** A request for control as this client keeps it: the tab, who asks, and until when. */
export interface ControlRequest {
  id: string;
  tabId: string;
  accountId: string;
  /** Local time (ms) when it lapses unanswered. */
  deadline: number;
}

/** The requests shown after an event: a new one is added (once), an ended one goes. */
export function controlRequestsAfter(requests: ControlRequest[], event: TeamApiEvent, now: number): ControlRequest[] {
  const data = (typeof event.data === 'object' && event.data !== null ? event.data : {}) as Record<string, unknown>;
  if (typeof data.id !== 'string') return requests;
  if (event.event === EVENT.controlRequestResolved) return requests.filter((request) => request.id !== data.id);
  if (event.event !== EVENT.controlRequested) return requests;
  if (typeof data.tabId !== 'string' || typeof data.accountId !== 'string') return requests;
  const seconds = typeof data.expiresIn === 'number' ? data.expiresIn : 60;
  const request = { id: data.id, tabId: data.tabId, accountId: data.accountId, deadline: now + seconds * 1000 };
  return [...requests.filter((old) => old.id !== request.id), request];
}

/** The requests still waiting at ``now``. */
export function waiting(requests: ControlRequest[], now: number): ControlRequest[] {
  const left = requests.filter((request) => request.deadline > now);
  return left.length === requests.length ? requests : left;
}
