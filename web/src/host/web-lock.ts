/**
 * One live browser tab per account and host: a Web Lock held while the host screen is open.
 * A second tab is told so and may take over, which ends the first one's hold.
 */

export type LockOutcome = 'held' | 'busy' | 'unsupported';

export interface HeldLock {
  outcome: LockOutcome;
  /** Resolves when another tab took the lock from us. */
  lost: Promise<void>;
  release(): void;
}

export function lockName(accountId: string, hostId: string): string {
  return `crewhost.live.${accountId}.${hostId}`;
}

/** Try to hold the lock; with `steal`, take it from the tab that holds it. */
export function holdLiveLock(accountId: string, hostId: string, steal = false): Promise<HeldLock> {
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  if (!locks) return Promise.resolve({ outcome: 'unsupported', lost: new Promise<void>(() => undefined), release: () => undefined });
  return new Promise((resolve) => {
    let releaseLock: () => void = () => undefined;
    let markLost: () => void = () => undefined;
    const lost = new Promise<void>((done) => (markLost = done));
    const options: LockOptions = steal ? { steal: true } : { ifAvailable: true };
    locks
      .request(lockName(accountId, hostId), options, (lock) => {
        if (lock === null) {
          resolve({ outcome: 'busy', lost, release: () => undefined });
          return undefined;
        }
        resolve({ outcome: 'held', lost, release: () => releaseLock() });
        return new Promise<void>((done) => (releaseLock = done));
      })
      .catch(() => markLost()); // a steal by another tab rejects our request with AbortError
  });
}
