/**
 * Ending access everywhere when a session ends: a sign-out in one browser tab reaches the
 * others over a BroadcastChannel; the hub's event stream (`GET /v1/events`) says at once
 * when this account's teams or roles changed, it was removed from a team, or the session
 * ended on another device; and a tab that comes back into focus asks the hub whether its
 * session still stands and, when it does, says its teams and roles may have changed.
 */

import { ApiError } from './api/client';
import { probeMe } from './api/endpoints';

const CHANNEL = 'crewhost.session';
const EVENTS_PATH = '/v1/events';
// After the stream fails for good (not the browser's own retries), try again this much later.
const REOPEN_MS = 5_000;

/** Tell the other tabs of this browser that the session ended. */
export function announceSignOut(): void {
  if (typeof BroadcastChannel === 'undefined') return;
  const channel = new BroadcastChannel(CHANNEL);
  channel.postMessage('signedOut');
  channel.close();
}

/**
 * Call `ended` when another tab signs out or, on focus, the hub no longer knows the session;
 * call `refocused` when, on focus, the session still stands (to load what may have changed).
 */
export function watchSession(ended: () => void, refocused: () => void = () => undefined): () => void {
  const channel = typeof BroadcastChannel === 'undefined' ? null : new BroadcastChannel(CHANNEL);
  if (channel) channel.onmessage = (event: MessageEvent) => event.data === 'signedOut' && ended();
  const onFocus = () => {
    probeMe().then(refocused, (error: unknown) => {
      if (error instanceof ApiError && error.status === 401) ended();
    });
  };
  window.addEventListener('focus', onFocus);
  const stopStream = watchAccessStream(ended, refocused, onFocus);
  return () => {
    channel?.close();
    window.removeEventListener('focus', onFocus);
    stopStream();
  };
}

/** The hub's stream of this account's access changes, reopened when it fails for good. */
function watchAccessStream(ended: () => void, changed: () => void, check: () => void): () => void {
  if (typeof EventSource === 'undefined') return () => undefined;
  let source: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const open = () => {
    source = new EventSource(EVENTS_PATH, { withCredentials: true });
    source.addEventListener('access', (event) => {
      let code: unknown = null;
      try {
        code = (JSON.parse((event as MessageEvent<string>).data) as { code?: unknown }).code;
      } catch {
        return;
      }
      if (code === 'sessionEnded') ended();
      else changed();
    });
    source.onerror = () => {
      // The browser retries a dropped stream by itself; a refused one (a 401) it gives up on.
      if (source?.readyState !== EventSource.CLOSED || stopped) return;
      check();
      timer = setTimeout(open, REOPEN_MS);
    };
  };
  open();
  return () => {
    stopped = true;
    clearTimeout(timer);
    source?.close();
  };
}
