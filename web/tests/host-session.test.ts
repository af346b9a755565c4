/** The connection's life: one automatic reconnect while the hub still lists the host. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/client';
import type { CloseReason } from '../src/host/connection';
import { HostSession, type Phase } from '../src/host/host-session';
import { HostKeyChanged } from '../src/host/known-hosts';
import { ERROR_MESSAGES } from '../src/errors/messages';

class FakeConnection {
  private listener: ((reason: CloseReason) => void) | null = null;
  closedByUs = false;

  onClose(listener: (reason: CloseReason) => void) {
    this.listener = listener;
    return () => undefined;
  }

  close() {
    this.closedByUs = true;
    this.listener?.({ kind: 'closedByUs' });
  }

  lose(reason: CloseReason) {
    this.listener?.(reason);
  }
}

function harness(options: { listed: boolean[]; opens: Array<FakeConnection | Error> }) {
  const phases: Phase[] = [];
  const revocations: Array<string | null> = [];
  let opened = 0;
  const session = new HostSession<FakeConnection>({
    open: async () => {
      const next = options.opens[opened++];
      if (next === undefined) throw new Error('no more connections');
      if (next instanceof Error) throw next;
      return next;
    },
    stillListed: async () => options.listed.shift() ?? false,
    revoked: (code) => revocations.push(code),
  });
  session.subscribe((state) => {
    if (phases.at(-1) !== state.phase) phases.push(state.phase);
  });
  return { session, phases, revocations, opened: () => opened };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('HostSession', () => {
  it('connects, and after a loss reconnects once when the host is still listed', async () => {
    const first = new FakeConnection();
    const second = new FakeConnection();
    const { session, phases, opened } = harness({ listed: [true, false], opens: [first, second] });
    await session.connect();
    first.lose({ kind: 'lost' });
    await settled();
    expect(session.state.connection).toBe(second);
    second.lose({ kind: 'lost' });
    await settled();
    expect(phases).toEqual(['connecting', 'connected', 'disconnected', 'reconnecting', 'connected', 'disconnected']);
    expect(opened()).toBe(2);
    expect(session.state.detail).toBe('The connection to the host was lost.');
  });

  it('after a role change, says so in words and reconnects with the new role', async () => {
    const first = new FakeConnection();
    const second = new FakeConnection();
    const { session, phases, revocations, opened } = harness({ listed: [true], opens: [first, second] });
    await session.connect();
    first.lose({ kind: 'revoked', code: 'roleChanged' });
    await settled();
    expect(revocations).toEqual(['roleChanged']);
    expect(phases).toEqual(['connecting', 'connected', 'revoked', 'reconnecting', 'connected']);
    expect(session.state.connection).toBe(second);
    expect(opened()).toBe(2);
  });

  it('a host the hub lists offline fails at once with the table’s words, not a generic one', async () => {
    const offline = new ApiError(503, 'hostOffline', 'the host is not connected to the hub');
    const { session, phases, opened } = harness({ listed: [], opens: [offline] });
    await session.connect();
    expect(phases).toEqual(['connecting', 'failed']);
    expect(session.state.detail).toBe(ERROR_MESSAGES.get('hostOffline'));
    expect(opened()).toBe(1);
  });

  it('after a removal, shows the table’s words, passes the code on and does not retry', async () => {
    const first = new FakeConnection();
    const { session, phases, revocations, opened } = harness({ listed: [true], opens: [first, new FakeConnection()] });
    await session.connect();
    first.lose({ kind: 'revoked', code: 'removedFromTeam' });
    await settled();
    expect(phases).toEqual(['connecting', 'connected', 'revoked']);
    expect(revocations).toEqual(['removedFromTeam']);
    expect(session.state.detail).toBe(ERROR_MESSAGES.get('removedFromTeam'));
    expect(opened()).toBe(1);
  });

  it('reconnects after a revocation only if the hub still lists the host', async () => {
    const first = new FakeConnection();
    const { session, phases, opened } = harness({ listed: [false], opens: [first] });
    await session.connect();
    first.lose({ kind: 'revoked', code: null });
    await settled();
    expect(phases).toEqual(['connecting', 'connected', 'revoked']);
    expect(session.state.detail).toBe('The host ended the connection. Reconnect to continue.');
    expect(opened()).toBe(1);
  });

  it('blocks on a changed host key, and closing it ourselves starts no reconnect', async () => {
    const changed = new HostKeyChanged('h', 'pinned-key-aaaaaaaa', 'offered-key-bbbbbbb');
    const blocked = harness({ listed: [true], opens: [changed] });
    await blocked.session.connect();
    expect(blocked.session.state.phase).toBe('keyChanged');
    expect(blocked.session.state.keyChange).toBe(changed);

    const connection = new FakeConnection();
    const stopped = harness({ listed: [true], opens: [connection, new FakeConnection()] });
    await stopped.session.connect();
    stopped.session.stop();
    await settled();
    expect(connection.closedByUs).toBe(true);
    expect(stopped.opened()).toBe(1);
  });
});
