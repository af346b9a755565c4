/** A second tab of the same host waits for the first, rather than looking as if it connects. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { liveStatus } from '../src/host/use-host-session';
import { holdLiveLock } from '../src/host/web-lock';

type Callback = (lock: { name: string } | null) => Promise<void> | undefined;

/** One lock name's worth of the Web Locks API: ifAvailable, steal, a queue and abort. */
class FakeLocks {
  private holder: { done: Promise<unknown>; reject: (error: Error) => void } | null = null;
  private readonly queue: Array<() => void> = [];

  request(name: string, options: LockOptions, callback: Callback): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const grant = () => {
        const done = Promise.resolve(callback({ name })).then(() => {
          if (this.holder?.reject === reject) this.next();
        });
        this.holder = { done, reject };
        done.then(resolve, reject);
      };
      if (options.steal) {
        this.holder?.reject(new DOMException('stolen', 'AbortError'));
        grant();
      } else if (this.holder === null) grant();
      else if (options.ifAvailable) Promise.resolve(callback(null)).then(resolve);
      else {
        this.queue.push(grant);
        options.signal?.addEventListener('abort', () => {
          this.queue.splice(this.queue.indexOf(grant), 1);
          reject(new DOMException('aborted', 'AbortError'));
        });
      }
    });
  }

  private next(): void {
    this.holder = null;
    this.queue.shift()?.();
  }
}

afterEach(() => vi.unstubAllGlobals());

describe('the live lock', () => {
  it('tells a second tab it is busy, then hands it the lock when the first lets go', async () => {
    vi.stubGlobal('navigator', { locks: new FakeLocks() });
    const first = await holdLiveLock('account', 'host');
    expect(first.outcome).toBe('held');
    expect((await holdLiveLock('account', 'host')).outcome).toBe('busy');

    let second: string | null = null;
    void holdLiveLock('account', 'host', 'wait').then((held) => (second = held.outcome));
    await Promise.resolve();
    expect(second).toBeNull();
    first.release();
    await vi.waitFor(() => expect(second).toBe('held'));
  });

  it('lets a tab take over, which the first tab hears as lost', async () => {
    vi.stubGlobal('navigator', { locks: new FakeLocks() });
    const first = await holdLiveLock('account', 'host');
    const taken = await holdLiveLock('account', 'host', 'steal');
    expect(taken.outcome).toBe('held');
    await expect(first.lost).resolves.toBeUndefined();
  });

  it('stops waiting when the screen closes', async () => {
    vi.stubGlobal('navigator', { locks: new FakeLocks() });
    const first = await holdLiveLock('account', 'host');
    const closed = new AbortController();
    let granted = false;
    void holdLiveLock('account', 'host', 'wait', closed.signal).then(() => (granted = true));
    closed.abort();
    first.release();
    await new Promise((resolve) => setTimeout(resolve, 0)); // the release settles
    expect((await holdLiveLock('account', 'host')).outcome).toBe('held');
    expect(granted).toBe(false);
  });
});

describe('liveStatus', () => {
  it('says a tab waits for the other tab, not that it connects', () => {
    expect(liveStatus('busy', 'connecting')).toBe('otherTab');
    expect(liveStatus('lost', 'connected')).toBe('otherTab');
    expect(liveStatus('asking', 'connecting')).toBe('connecting');
    expect(liveStatus('held', 'revoked')).toBe('revoked');
  });
});
