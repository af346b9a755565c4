/**
 * The setup link the hub prints at first start is `/app/setup#code=XXXX`. The code rides in
 * the fragment (never sent to a server, never in a Referer); the page reads it once and then
 * takes it out of the address bar so it is not left in the history or on screen.
 */

/** The setup code in a URL fragment such as `#code=XXXX`, or null. */
export function parseSetupCode(hash: string): string | null {
  const fragment = hash.startsWith('#') ? hash.slice(1) : hash;
  if (!fragment) return null;
  const code = new URLSearchParams(fragment).get('code');
  const trimmed = code?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** Read the setup code from the address and remove the fragment from the address bar. */
export function takeSetupCode(
  location: Pick<Location, 'hash' | 'pathname' | 'search'> = window.location,
  history: Pick<History, 'replaceState' | 'state'> = window.history,
): string | null {
  const code = parseSetupCode(location.hash);
  if (location.hash) {
    history.replaceState(history.state, '', location.pathname + location.search);
  }
  return code;
}
