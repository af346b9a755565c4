/**
 * One live browser tab per account and host: a Web Lock held while the host screen is open.
 * A second tab is told so and waits in the lock's queue (it connects when the first closes),
 * or may take over, which ends the first one's hold.
 */

export type LockOutcome = 'held' | 'busy' | 'unsupported';

/** `try` gives up at once if another tab holds it, `wait` queues, `steal` takes it over. */
export type LockMode = 'try' | 'wait' | 'steal';

export interface HeldLock {
  outcome: LockOutcome;
  /** Resolves when another tab took the lock from us. */
  lost: Promise<void>;
  release(): void;
}

export function lockName(accountId: string, hostId: string): string {
  return `crewhost.live.${accountId}.${hostId}`;
}

function lockOptions(mode: LockMode, signal: AbortSignal | undefined): LockOptions {
  if (mode === 'steal') return { steal: true };
  if (mode === 'try') return { ifAvailable: true };
  return signal ? { signal } : {};
}

/**
 * Hold the lock. A `wait` resolves only once the lock is ours, and never if `signal` aborts
 * first (the screen closed while it waited).
 */
export function holdLiveLock(accountId: string, hostId: string, mode: LockMode = 'try', signal?: AbortSignal): Promise<HeldLock> {
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  if (!locks) return Promise.resolve({ outcome: 'unsupported', lost: new Promise<void>(() => undefined), release: () => undefined });
  return new Promise((resolve) => {
    let releaseLock: () => void = () => undefined;
    let markLost: () => void = () => undefined;
    const lost = new Promise<void>((done) => (markLost = done));
    locks
      .request(lockName(accountId, hostId), lockOptions(mode, signal), (lock) => {
        if (lock === null) {
          resolve({ outcome: 'busy', lost, release: () => undefined });
          return undefined;
        }
        resolve({ outcome: 'held', lost, release: () => releaseLock() });
        return new Promise<void>((done) => (releaseLock = done));
      })
      .catch(() => markLost()); // a steal by another tab (or our own abort) rejects the request
  });
}
