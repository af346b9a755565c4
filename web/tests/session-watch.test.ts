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
