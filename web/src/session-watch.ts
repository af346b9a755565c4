/**
 * Ending access everywhere when a session ends: a sign-out in one browser tab reaches the
 * others over a BroadcastChannel, and a tab that comes back into focus asks the hub
 * whether its session still stands (a session revoked from another device ends here) and,
 * when it does, says its teams and roles may have changed meanwhile.
 */

import { ApiError } from './api/client';
import { probeMe } from './api/endpoints';

const CHANNEL = 'crewhost.session';

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
  return () => {
    channel?.close();
    window.removeEventListener('focus', onFocus);
  };
}
