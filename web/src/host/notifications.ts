/**
 * A member's notifications on a host (`notifications-v1`): the list the bell opens, kept up
 * to date by `notification-created` and `notifications-read`, and when a new one also shows
 * as a browser notification (the page is hidden and the member allowed them).
 */

import type { EventData, RouteArgs, RouteResult, TeamApiEvent } from './protocol';

export type NotificationItem = RouteResult<'notifications-v1/list'>['notifications'][number];
export type NotificationAdded = EventData<'notification-created'>;
export type Preferences = RouteResult<'notifications-v1/get_preferences'>;
export type EmailChoice = Preferences['approval'];
export type MailServerState = RouteResult<'mail-server-v1/get'>;
export type SetMailServerArgs = RouteArgs<'mail-server-v1/set'>;

export interface NotificationState {
  items: NotificationItem[];
  unread: number;
}

export const EMPTY: NotificationState = { items: [], unread: 0 };

/** How many the bell's list shows. */
export const LIST_LIMIT = 30;

export const KIND_TEXT: Record<NotificationItem['kind'], string> = {
  approval: 'Approvals waiting for you',
  question: 'Questions for you',
  runFinished: 'Runs that finished',
  runFailed: 'Runs that failed or stopped',
  budget: 'Budgets nearly spent',
};

export const CHOICE_TEXT: Record<EmailChoice, string> = {
  off: 'Off',
  immediately: 'Immediately',
  digest: 'Hourly digest',
};

/** The state after an event: a new notification goes on top (once); a read mark sets the count. */
export function notificationsAfterEvent(state: NotificationState, event: TeamApiEvent): NotificationState {
  if (event.event === 'notification-created') {
    const data = event.data as NotificationAdded;
    if (state.items.some((item) => item.id === data.id)) return { ...state, unread: data.unread };
    return { items: [itemOf(data), ...state.items].slice(0, LIST_LIMIT), unread: data.unread };
  }
  if (event.event === 'notifications-read') {
    const { unread } = event.data as EventData<'notifications-read'>;
    // Which ones were read elsewhere is not said: with none unread, all of them were.
    const items = unread === 0 ? state.items.map((item) => (item.readAt === null ? { ...item, readAt: 0 } : item)) : state.items;
    return { items, unread };
  }
  return state;
}

/** A new notification as the list shows it. */
export function itemOf(data: NotificationAdded): NotificationItem {
  return {
    id: data.id,
    kind: data.kind,
    title: data.title,
    body: data.body,
    agentId: data.agentId,
    threadId: data.threadId,
    requestId: data.requestId,
    routineId: null,
    runId: null,
    createdAt: data.createdAt,
    readAt: null,
  };
}

/** The state after this member marked one read here. */
export function markedRead(state: NotificationState, id: string, unread: number, now: number): NotificationState {
  return { items: state.items.map((item) => (item.id === id && item.readAt === null ? { ...item, readAt: now } : item)), unread };
}

/** Whether a new notification also goes to the browser: only while the page is hidden, and
 * only when the member allowed it (the permission is asked on their click, never on load). */
export function showsInBrowser(hidden: boolean, permission: NotificationPermission | 'unsupported'): boolean {
  return hidden && permission === 'granted';
}

/** Whether to offer "Allow browser notifications": the browser has them and nobody chose yet. */
export function offersBrowserPermission(permission: NotificationPermission | 'unsupported'): boolean {
  return permission === 'default';
}

/** The bell's count as it shows: nothing at 0, "99+" past 99. */
export function badgeText(unread: number): string {
  if (unread <= 0) return '';
  return unread > 99 ? '99+' : String(unread);
}

/** The preferences form's answer: an empty address means no email. */
export function preferencesBody(form: Preferences): RouteArgs<'notifications-v1/set_preferences'> {
  const email = (form.email ?? '').trim();
  return { ...form, email: email === '' ? null : email };
}
