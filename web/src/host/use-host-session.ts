/**
 * The host screen's connection: the one-tab Web Lock, then a `HostSession` while the lock
 * is ours. While another tab of this browser holds it, this tab waits in the lock's queue
 * and connects when that tab closes; losing the lock to a takeover ends the connection here
 * and queues again.
 */

import { useCallback, useEffect, useState } from 'preact/hooks';
import { useSession } from '../session-context';
import { HostConnection } from './connection';
import { HostSession, type Phase, type SessionState } from './host-session';
import { hostStillListed, hubSignaling } from './hub-signaling';
import { holdLiveLock, type HeldLock } from './web-lock';

/** `asking` until the lock answers; `busy` and `lost`: another tab has it, and this one waits. */
export type LockState = 'asking' | 'held' | 'busy' | 'lost';

/** What the screen's status says: the connection's phase, or that another tab has it. */
export type LiveStatus = Phase | 'otherTab';

export interface UseHostSession {
  lock: LockState;
  state: SessionState<HostConnection>;
  status: LiveStatus;
  /** Take the live connection over from another tab of this browser. */
  takeOver(): void;
  reconnect(): void;
}

const INITIAL: SessionState<HostConnection> = { phase: 'connecting', connection: null, detail: null, keyChange: null };

/** While another tab holds the lock this tab is not connecting: it waits for that tab. */
export function liveStatus(lock: LockState, phase: Phase): LiveStatus {
  return lock === 'busy' || lock === 'lost' ? 'otherTab' : phase;
}

/** Host revocations that change the account's teams or roles, which the app must load again. */
const TEAMS_CHANGED: ReadonlySet<string | null> = new Set(['roleChanged', 'removedFromTeam']);

export function useHostSession(teamId: string, hostId: string, accountId: string): UseHostSession {
  const { accessChanged } = useSession();
  const [lock, setLock] = useState<LockState>('asking');
  const [state, setState] = useState<SessionState<HostConnection>>(INITIAL);
  const [session, setSession] = useState<HostSession<HostConnection> | null>(null);
  const [attempt, setAttempt] = useState<{ steal: boolean; n: number }>({ steal: false, n: 0 });

  useEffect(() => {
    let cancelled = false;
    let release: () => void = () => {};
    let current: HostSession<HostConnection> | null = null;
    const waiting = new AbortController();

    const waitForTheOtherTab = (lockState: 'busy' | 'lost') => {
      setLock(lockState);
      setState(INITIAL);
      void holdLiveLock(accountId, hostId, 'wait', waiting.signal).then(held);
    };
    const held = (lockHeld: HeldLock) => {
      release = lockHeld.release;
      if (cancelled) {
        lockHeld.release();
        return;
      }
      if (lockHeld.outcome === 'busy') {
        waitForTheOtherTab('busy');
        return;
      }
      setLock('held');
      const live = new HostSession<HostConnection>({
        open: () => HostConnection.open(hubSignaling, teamId, hostId, accountId),
        stillListed: () => hostStillListed(teamId, hostId),
        revoked: (code) => {
          if (TEAMS_CHANGED.has(code)) void accessChanged();
        },
      });
      current = live;
      live.subscribe(setState);
      setSession(live);
      void live.connect();
      void lockHeld.lost.then(() => {
        live.stop();
        if (!cancelled) waitForTheOtherTab('lost');
      });
    };
    void holdLiveLock(accountId, hostId, attempt.steal ? 'steal' : 'try').then(held);
    return () => {
      cancelled = true;
      waiting.abort();
      current?.stop();
      release();
    };
  }, [teamId, hostId, accountId, attempt, accessChanged]);

  const takeOver = useCallback(() => setAttempt((old) => ({ steal: true, n: old.n + 1 })), []);
  const reconnect = useCallback(() => void session?.connect(), [session]);
  return { lock, state, status: liveStatus(lock, state.phase), takeOver, reconnect };
}
