/**
 * A member's connection to one host over time: connecting, connected, reconnecting,
 * revoked, and what the screen says about each.
 *
 * When a connection ends without us closing it (the network dropped, the host restarted,
 * or the host revoked it after a role change), the client reconnects once on its own if
 * the hub still lists the host for this team; a second loss waits for the person. A
 * revocation that ends access for good (removed from the team, the host removed, the
 * session ended) is not retried: it is passed on (`revoked`) for the app to act on. A
 * signed-out session never gets that far: the hub's 401 sends the app to sign-in.
 */

import { describeCode, describeError } from '../error-messages';
import type { CloseReason } from './connection';
import { HostKeyChanged } from './known-hosts';

export type Phase = 'connecting' | 'connected' | 'reconnecting' | 'revoked' | 'disconnected' | 'keyChanged' | 'failed';

export interface Connectable {
  onClose(listener: (reason: CloseReason) => void): () => void;
  close(): void;
}

export interface SessionState<C> {
  phase: Phase;
  connection: C | null;
  /** Why we are not connected, in words for the person. */
  detail: string | null;
  keyChange: HostKeyChanged | null;
}

export interface SessionDeps<C extends Connectable> {
  open(): Promise<C>;
  stillListed(): Promise<boolean>;
  /** The host ended the connection because access changed; `code` says why. */
  revoked?(code: string | null): void;
}

/** Revocation codes after which a new connection would only be refused. */
const FINAL_REVOCATIONS: ReadonlySet<string> = new Set(['removedFromTeam', 'hostRemoved', 'sessionEnded']);

/** What the screen says when the host ended the connection. */
export function revokedDetail(code: string | null): string {
  return code === null ? 'The host ended the connection. Reconnect to continue.' : describeCode(code, 'host');
}

export class HostSession<C extends Connectable> {
  private current: SessionState<C> = { phase: 'connecting', connection: null, detail: null, keyChange: null };
  private readonly listeners = new Set<(state: SessionState<C>) => void>();
  private stopped = false;
  private autoRetryLeft = 1;

  constructor(private readonly deps: SessionDeps<C>) {}

  get state(): SessionState<C> {
    return this.current;
  }

  subscribe(listener: (state: SessionState<C>) => void): () => void {
    this.listeners.add(listener);
    listener(this.current);
    return () => this.listeners.delete(listener);
  }

  /** Connect (again). A person pressing "Reconnect" gets the automatic retry back too. */
  async connect(phase: 'connecting' | 'reconnecting' = 'connecting'): Promise<void> {
    this.set({ phase, connection: null, detail: null, keyChange: null });
    let connection: C;
    try {
      connection = await this.deps.open();
    } catch (error) {
      if (this.stopped) return;
      if (error instanceof HostKeyChanged) this.set({ phase: 'keyChanged', connection: null, detail: error.message, keyChange: error });
      else this.set({ phase: 'failed', connection: null, detail: describeError(error, 'The host could not be reached. Try again.'), keyChange: null });
      return;
    }
    if (this.stopped) {
      connection.close();
      return;
    }
    this.autoRetryLeft = 1;
    connection.onClose((reason) => void this.lost(reason));
    this.set({ phase: 'connected', connection, detail: null, keyChange: null });
  }

  stop(): void {
    this.stopped = true;
    this.current.connection?.close();
  }

  private async lost(reason: CloseReason): Promise<void> {
    if (this.stopped || reason.kind === 'closedByUs') return;
    const phase: Phase = reason.kind === 'revoked' ? 'revoked' : 'disconnected';
    const detail = reason.kind === 'revoked' ? revokedDetail(reason.code) : 'The connection to the host was lost.';
    this.set({ phase, connection: null, detail, keyChange: null });
    if (reason.kind === 'revoked') {
      this.deps.revoked?.(reason.code);
      if (reason.code !== null && FINAL_REVOCATIONS.has(reason.code)) return;
    }
    if (this.autoRetryLeft === 0) return;
    this.autoRetryLeft -= 1;
    if (await this.deps.stillListed()) {
      if (!this.stopped) await this.connect('reconnecting');
    }
  }

  private set(state: SessionState<C>): void {
    this.current = state;
    for (const listener of [...this.listeners]) listener(state);
  }
}
