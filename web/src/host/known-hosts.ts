/**
 * Host keys pinned per account in localStorage: trust on first use, and a hard stop when a
 * host answers with another key (someone may be in the middle). Only keys live here.
 */

const PREFIX = 'crewhost.knownHosts.';

export class HostKeyChanged extends Error {
  readonly code = 'hostKeyChanged';

  constructor(
    readonly hostId: string,
    readonly pinned: string,
    readonly offered: string,
  ) {
    super(
      `This host's identity key changed (pinned ${pinned.slice(0, 12)}…, now ${offered.slice(0, 12)}…). ` +
        'Someone may be between you and the host. If an owner reinstalled it, confirm the new key with them first.',
    );
    this.name = 'HostKeyChanged';
  }
}

function read(accountId: string): Record<string, string> {
  try {
    const value = JSON.parse(localStorage.getItem(PREFIX + accountId) ?? '{}') as unknown;
    return typeof value === 'object' && value !== null ? (value as Record<string, string>) : {};
  } catch {
    return {};
  }
}

function write(accountId: string, known: Record<string, string>): void {
  localStorage.setItem(PREFIX + accountId, JSON.stringify(known));
}

/** Pin on first sight; throw `HostKeyChanged` when a pinned key differs. */
export function checkHostKey(accountId: string, hostId: string, publicKey: string): void {
  const known = read(accountId);
  const pinned = known[hostId];
  if (pinned === undefined) write(accountId, { ...known, [hostId]: publicKey });
  else if (pinned !== publicKey) throw new HostKeyChanged(hostId, pinned, publicKey);
}

/** Trust a host's new key (after the person confirmed it out of band). */
export function replaceHostKey(accountId: string, hostId: string, publicKey: string): void {
  write(accountId, { ...read(accountId), [hostId]: publicKey });
}
