import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, apiRequest, CSRF_HEADER, onSignInNeeded } from '../src/api/client';
import { changeRole, getMe, listTeams, signIn, signOut } from '../src/api/endpoints';
import { fillPath } from '../src/api/typed-call';

type FetchArgs = [input: string, init: RequestInit];

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

let fetchMock: ReturnType<typeof vi.fn<(...args: FetchArgs) => Promise<Response>>>;

beforeEach(() => {
  fetchMock = vi.fn<(...args: FetchArgs) => Promise<Response>>();
  vi.stubGlobal('fetch', fetchMock);
});

afterEach(() => {
  vi.unstubAllGlobals();
});

function lastCall(): { url: string; init: RequestInit; headers: Record<string, string> } {
  const [url, init] = fetchMock.mock.calls.at(-1)!;
  return { url, init, headers: init.headers as Record<string, string> };
}

describe('CSRF header', () => {
  it('is not sent on GET', async () => {
    fetchMock.mockResolvedValue(jsonResponse(200, { teams: [] }));
    await listTeams();
    const { url, init, headers } = lastCall();
    expect(url).toBe('/v1/teams');
    expect(init.method).toBe('GET');
    expect(headers).not.toHaveProperty(CSRF_HEADER);
    expect(init.credentials).toBe('same-origin');
    expect(init.body).toBeUndefined();
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('is sent on %s', async (method) => {
    fetchMock.mockResolvedValue(new Response(null, { status: 204 }));
    await apiRequest(method, '/v1/anything', { json: {} });
    const { init, headers } = lastCall();
    expect(init.method).toBe(method);
    expect(headers[CSRF_HEADER]).toBe('1');
    expect(init.credentials).toBe('same-origin');
  });

  it('is sent on a write without a body (sign-out)', async () => {
    fetchMock.mockResolvedValue(new Response(null, { status: 204 }));
    await expect(signOut()).resolves.toBeUndefined();
    const { url, init, headers } = lastCall();
    expect(url).toBe('/v1/sessions/current');
    expect(init.method).toBe('DELETE');
    expect(headers[CSRF_HEADER]).toBe('1');
    expect(headers).not.toHaveProperty('Content-Type');
  });
});

describe('bodies and paths', () => {
  it('sends JSON with its content type and parses the JSON answer', async () => {
    const member = { accountId: 'b'.repeat(32), email: 'a@b.co', name: 'Ada', role: 'admin', joinedAt: 1 };
    fetchMock.mockResolvedValue(jsonResponse(200, member));
    const answer = await changeRole('a'.repeat(32), 'b'.repeat(32), 'admin');
    const { url, init, headers } = lastCall();
    expect(url).toBe(`/v1/teams/${'a'.repeat(32)}/members/${'b'.repeat(32)}`);
    expect(init.method).toBe('PATCH');
    expect(headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(init.body as string)).toEqual({ role: 'admin' });
    expect(answer).toEqual(member);
  });

  it('sends a raw image with its own content type', async () => {
    fetchMock.mockResolvedValue(new Response(null, { status: 204 }));
    const image = new Blob([new Uint8Array([137, 80, 78, 71])], { type: 'image/png' });
    await apiRequest('PUT', '/v1/me/avatar', { raw: image });
    const { init, headers } = lastCall();
    expect(headers['Content-Type']).toBe('image/png');
    expect(headers[CSRF_HEADER]).toBe('1');
    expect(init.body).toBe(image);
  });

  it('fills and encodes path parameters', () => {
    expect(fillPath('/v1/teams/{team_id}/members', { team_id: 'a/b?' })).toBe('/v1/teams/a%2Fb%3F/members');
    expect(() => fillPath('/v1/teams/{team_id}', {})).toThrow(/team_id/);
  });
});

describe('errors', () => {
  it('become an ApiError with status, code, message and field', async () => {
    fetchMock.mockResolvedValue(
      jsonResponse(400, {
        error: { code: 'invalidArgument', message: "field 'password': too short", field: 'password' },
      }),
    );
    const error = await apiRequest('POST', '/v1/accounts', { json: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: 'invalidArgument', field: 'password', message: "field 'password': too short" });
  });

  it('have a null field when the hub names none', async () => {
    fetchMock.mockResolvedValue(jsonResponse(409, { error: { code: 'lastOwner', message: 'a team needs an owner' } }));
    const error = (await apiRequest('POST', '/v1/teams/x/leave').catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe('lastOwner');
    expect(error.field).toBeNull();
  });

  it('carry Retry-After for rate limits', async () => {
    fetchMock.mockResolvedValue(
      jsonResponse(429, { error: { code: 'rateLimited', message: 'slow down' } }, { 'Retry-After': '30' }),
    );
    const error = (await signIn({ email: 'a@b.co', password: 'x' }).catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ status: 429, code: 'rateLimited', retryAfter: 30 });
  });

  it('survive a body that is not the error shape', async () => {
    fetchMock.mockResolvedValue(new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    const error = (await apiRequest('GET', '/v1/me').catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ status: 502, code: 'httpError', message: 'Bad Gateway', field: null });
  });

  it('turn a network failure into a network ApiError', async () => {
    fetchMock.mockRejectedValue(new TypeError('Failed to fetch'));
    const error = (await apiRequest('GET', '/v1/me').catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ status: 0, code: 'network' });
  });
});

describe('401', () => {
  it('on a call that needs a session asks for sign-in, and still throws', async () => {
    const listener = vi.fn();
    const undo = onSignInNeeded(listener);
    fetchMock.mockResolvedValue(jsonResponse(401, { error: { code: 'sessionExpired', message: 'sign in again' } }));
    await expect(getMe()).rejects.toMatchObject({ status: 401, code: 'sessionExpired' });
    expect(listener).toHaveBeenCalledTimes(1);
    expect(listener.mock.calls[0]![0]).toBeInstanceOf(ApiError);
    undo();
  });

  it('on sign-in (wrong password) is only an error for the form', async () => {
    const listener = vi.fn();
    const undo = onSignInNeeded(listener);
    fetchMock.mockResolvedValue(jsonResponse(401, { error: { code: 'badCredentials', message: 'wrong' } }));
    await expect(signIn({ email: 'a@b.co', password: 'wrong-pass' })).rejects.toMatchObject({ code: 'badCredentials' });
    expect(listener).not.toHaveBeenCalled();
    undo();
  });

  it('other statuses do not ask for sign-in', async () => {
    const listener = vi.fn();
    const undo = onSignInNeeded(listener);
    fetchMock.mockResolvedValue(jsonResponse(403, { error: { code: 'forbidden', message: 'no' } }));
    await expect(listTeams()).rejects.toBeInstanceOf(ApiError);
    expect(listener).not.toHaveBeenCalled();
    undo();
  });

  it('undoing the listener stops it', async () => {
    const listener = vi.fn();
    onSignInNeeded(listener)();
    fetchMock.mockResolvedValue(jsonResponse(401, { error: { code: 'unauthenticated', message: 'sign in first' } }));
    await expect(getMe()).rejects.toBeInstanceOf(ApiError);
    expect(listener).not.toHaveBeenCalled();
  });
});
