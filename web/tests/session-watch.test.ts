/** A session that ends in one tab, or on the hub, ends in every tab. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { announceSignOut, watchSession } from '../src/session-watch';

afterEach(() => vi.unstubAllGlobals());

const reply = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

describe('watchSession', () => {
  it('hears another tab sign out', async () => {
    const ended = vi.fn();
    const stop = watchSession(ended);
    announceSignOut();
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));
    stop();
  });

  it('asks the hub on focus and ends only on a 401', async () => {
    const fetchMock = vi.fn<() => Promise<Response>>();
    vi.stubGlobal('fetch', fetchMock);
    const ended = vi.fn();
    const stop = watchSession(ended);
    fetchMock.mockResolvedValueOnce(reply(200, { id: 'a', name: 'A', email: 'a@example.com' }));
    window.dispatchEvent(new Event('focus'));
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(1));
    fetchMock.mockResolvedValueOnce(reply(401, { error: { code: 'unauthenticated', message: 'sign in' } }));
    window.dispatchEvent(new Event('focus'));
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));
    stop();
    window.dispatchEvent(new Event('focus'));
    expect(fetchMock).toHaveBeenCalledTimes(2);
  });

  it('on focus with the session still standing, says what may have changed should be loaded', async () => {
    const fetchMock = vi.fn<() => Promise<Response>>();
    vi.stubGlobal('fetch', fetchMock);
    const ended = vi.fn();
    const refocused = vi.fn();
    const stop = watchSession(ended, refocused);
    fetchMock.mockResolvedValueOnce(reply(200, { id: 'a', name: 'A', email: 'a@example.com' }));
    window.dispatchEvent(new Event('focus'));
    await vi.waitFor(() => expect(refocused).toHaveBeenCalledTimes(1));
    fetchMock.mockResolvedValueOnce(reply(401, { error: { code: 'unauthenticated', message: 'sign in' } }));
    window.dispatchEvent(new Event('focus'));
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));
    expect(refocused).toHaveBeenCalledTimes(1);
    stop();
  });
});

/** A stand-in for the browser's EventSource: the test says what the hub sends. */
class FakeEventSource extends EventTarget {
  static readonly CLOSED = 2;
  static opened: FakeEventSource[] = [];
  readyState = 1;
  onerror: (() => void) | null = null;
  closed = false;

  constructor(readonly url: string) {
    super();
    FakeEventSource.opened.push(this);
  }

  send(code: string) {
    this.dispatchEvent(new MessageEvent('access', { data: JSON.stringify({ code, teamId: 't' }) }));
  }

  close() {
    this.closed = true;
  }
}

describe('the hub event stream', () => {
  it('reloads on a change of access and ends on a session ended elsewhere', () => {
    FakeEventSource.opened = [];
    vi.stubGlobal('EventSource', FakeEventSource);
    const ended = vi.fn();
    const changed = vi.fn();
    const stop = watchSession(ended, changed);
    const [source] = FakeEventSource.opened;
    expect(source!.url).toBe('/v1/events');
    source!.send('roleChanged');
    source!.send('removedFromTeam');
    source!.send('membershipsChanged');
    expect(changed).toHaveBeenCalledTimes(3);
    expect(ended).not.toHaveBeenCalled();
    source!.send('sessionEnded');
    expect(ended).toHaveBeenCalledTimes(1);
    stop();
    expect(source!.closed).toBe(true);
  });

  it('asks the hub whether the session stands when the stream is refused', async () => {
    FakeEventSource.opened = [];
    vi.stubGlobal('EventSource', FakeEventSource);
    const fetchMock = vi.fn<() => Promise<Response>>();
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockResolvedValueOnce(reply(401, { error: { code: 'unauthenticated', message: 'sign in' } }));
    const ended = vi.fn();
    const stop = watchSession(ended);
    const [source] = FakeEventSource.opened;
    source!.readyState = FakeEventSource.CLOSED;
    source!.onerror!();
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));
    stop();
  });
});
