/**
 * The host screen's connection: the one-tab Web Lock, then a `HostSession` while the lock
 * is ours. Losing the lock to another tab ends the connection here.
 */

import { useCallback, useEffect, useState } from 'preact/hooks';
import { HostConnection } from './connection';
import { HostSession, type SessionState } from './host-session';
import { hostStillListed, hubSignaling } from './hub-signaling';
import { holdLiveLock } from './web-lock';

export type LockState = 'waiting' | 'held' | 'busy' | 'lost';

export interface UseHostSession {
  lock: LockState;
  state: SessionState<HostConnection>;
  /** Take the live connection over from another tab of this browser. */
  takeOver(): void;
  reconnect(): void;
}

const INITIAL: SessionState<HostConnection> = { phase: 'connecting', connection: null, detail: null, keyChange: null };

export function useHostSession(teamId: string, hostId: string, accountId: string): UseHostSession {
  const [lock, setLock] = useState<LockState>('waiting');
  const [state, setState] = useState<SessionState<HostConnection>>(INITIAL);
  const [session, setSession] = useState<HostSession<HostConnection> | null>(null);
  const [attempt, setAttempt] = useState<{ steal: boolean; n: number }>({ steal: false, n: 0 });

  useEffect(() => {
    let cancelled = false;
    let release: () => void = () => {};
    let current: HostSession<HostConnection> | null = null;
    void holdLiveLock(accountId, hostId, attempt.steal).then((held) => {
      release = held.release;
      if (cancelled) {
        held.release();
        return;
      }
      if (held.outcome === 'busy') {
        setLock('busy');
        return;
      }
      setLock('held');
      current = new HostSession<HostConnection>({
        open: () => HostConnection.open(hubSignaling, teamId, hostId, accountId),
        stillListed: () => hostStillListed(teamId, hostId),
      });
      current.subscribe(setState);
      setSession(current);
      void current.connect();
      void held.lost.then(() => {
        current?.stop();
        if (!cancelled) setLock('lost');
      });
    });
    return () => {
      cancelled = true;
      current?.stop();
      release();
    };
  }, [teamId, hostId, accountId, attempt]);

  const takeOver = useCallback(() => setAttempt((old) => ({ steal: true, n: old.n + 1 })), []);
  const reconnect = useCallback(() => void session?.connect(), [session]);
  return { lock, state, takeOver, reconnect };
}
