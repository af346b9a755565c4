/**
 * The proxies' edit form and questions as values: the body `browser-proxies-v1/update`
 * takes (the address the form opened with, the mask kept as `keepPassword`), how many
 * open tabs a change closes, and the words of the questions asked before it.
 */

import type { RouteArgs, RouteResult, TabView } from './protocol';

export type ProxyView = RouteResult<'browser-proxies-v1/list'>['proxies'][number];
export type UpdateProxyArgs = RouteArgs<'browser-proxies-v1/update'>;

/** The host's mask for a saved password (eight U+2022); it never sends the password. */
export const PASSWORD_MASK = '••••••••';

/** What the edit form holds: the address (without its password) and the password input. */
export interface ProxyEdit {
  address: string;
  password: string;
}

export type ProxySave = { kind: 'nothing' } | { kind: 'update'; body: UpdateProxyArgs } | { kind: 'refused'; reason: string };

/** The edit form as it opens: the saved address and, when a password is saved, its mask. */
export function startEdit(proxy: ProxyView): ProxyEdit {
  return { address: proxy.address ?? '', password: proxy.password ? PASSWORD_MASK : '' };
}

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * ``address`` with ``password`` as its password, or null when it names no user to sign
 * in as. The sign-in ends at the last `@`, as the host reads it; the sellers' form
 * `host:port:user[:password]` becomes `http://user:password@host:port`.
 */
export function withPassword(address: string, password: string): string | null {
  const text = address.trim();
  const scheme = SCHEME.exec(text)?.[0] ?? '';
  const rest = text.slice(scheme.length);
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const user = rest.slice(0, at).split(':', 1)[0] ?? '';
    return user ? `${scheme}${user}:${password}@${rest.slice(at + 1)}` : null;
  }
  if (!scheme && !rest.startsWith('[')) {
    const [host, port, user] = rest.split(':');
    if (host && port && user) return `http://${user}:${password}@${host}:${port}`;
  }
  return null;
}

/**
 * What saving ``edit`` sends. ``opened`` is the proxy as the form opened (its address is
 * `previousAddress`, so the host refuses the save when someone changed it meanwhile). The
 * mask left as it is keeps the saved password; an emptied password input removes it; a
 * typed one goes into the address. A save that changes nothing sends nothing.
 */
export function saveEdit(opened: ProxyView, edit: ProxyEdit): ProxySave {
  const previousAddress = opened.address ?? '';
  const address = edit.address.trim();
  if (!address) return { kind: 'refused', reason: 'Write the proxy’s address.' };
  const kept = edit.password === PASSWORD_MASK && opened.password !== null;
  if (kept) {
    if (address === previousAddress) return { kind: 'nothing' };
    // The host keeps a saved password for the same host only (another port keeps it).
    if (hostOf(address) !== hostOf(previousAddress)) {
      return { kind: 'refused', reason: 'The proxy moves to another host: type its password again, or empty it.' };
    }
    return { kind: 'update', body: { id: opened.id, previousAddress, address, keepPassword: true } };
  }
  if (edit.password === '' || edit.password === PASSWORD_MASK) {
    if (address === previousAddress && opened.password === null) return { kind: 'nothing' };
    return { kind: 'update', body: { id: opened.id, previousAddress, address, keepPassword: false } };
  }
  const signed = withPassword(address, edit.password);
  if (signed === null) return { kind: 'refused', reason: 'A password needs a user name: write the address like http://user@host:port.' };
  return { kind: 'update', body: { id: opened.id, previousAddress, address: signed, keepPassword: false } };
}

/** The host an address names, as the host compares it: lower case, without brackets. */
export function hostOf(address: string): string {
  const text = address.trim();
  const rest = text.slice(SCHEME.exec(text)?.[0].length ?? 0);
  const place = rest.slice(rest.lastIndexOf('@') + 1).split('/', 1)[0] ?? '';
  const host = place.startsWith('[') ? place.slice(1, place.indexOf(']')) : (place.split(':', 1)[0] ?? '');
  return host.replace(/\.$/, '').toLowerCase();
}

/** The open tabs of the named profiles (a tab names its profile as the profile list does). */
export function tabsOfProfiles(tabs: readonly TabView[], profileNames: readonly string[]): number {
  const names = new Set(profileNames);
  return tabs.filter((tab) => tab.partitionKind === 'profile' && names.has(tab.partitionLabel)).length;
}

function tabsText(count: number): string {
  return `${count} open tab${count === 1 ? '' : 's'}`;
}

/** "A", "A and B", "A, B and C". */
export function listText(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** The question before a change that closes tabs; null when it closes none. */
export function closeTabsQuestion(count: number): string | null {
  return count > 0 ? `Close ${tabsText(count)}? The change closes the tabs of the profiles it affects.` : null;
}

/** The question before a delete: the profiles it moves to Automatic, and the tabs that close. */
export function deleteProxyQuestion(proxyName: string, profileNames: readonly string[], openTabs: number): string {
  const head = `Delete the proxy ${proxyName}?`;
  if (!profileNames.length) return head;
  const profiles = profileNames.length === 1 ? `The profile ${profileNames[0]} moves` : `The profiles ${listText(profileNames)} move`;
  const tabs = openTabs > 0 ? `, and ${tabsText(openTabs)} ${openTabs === 1 ? 'closes' : 'close'}` : '';
  return `${head} ${profiles} to Automatic${tabs}.`;
}

/** A proxy's mark as a list shows it; a member's computer is online or offline. */
export function statusText(proxy: ProxyView): { text: string; tone: 'ok' | 'warn' | 'muted' } | null {
  if (proxy.status === 'unreachable') return { text: 'Not answering', tone: 'warn' };
  if (proxy.status === 'signIn') return { text: 'Sign-in refused', tone: 'warn' };
  if (proxy.kind === 'computer') return proxy.status === 'offline' ? { text: 'Offline', tone: 'muted' } : { text: 'Online', tone: 'ok' };
  return null;
}
