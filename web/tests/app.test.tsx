import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/app';
import { LAST_TEAM_KEY } from '../src/ui-prefs';

const TEAM_A = 'a'.repeat(32);
const TEAM_B = 'b'.repeat(32);
const ME = { id: 'c'.repeat(32), email: 'ada@example.com', name: 'Ada Admin', hasAvatar: false, createdAt: 1 };

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

type Answers = Record<string, () => Response>;

function stubHub(answers: Answers) {
  const fetchMock = vi.fn(async (input: string, init?: RequestInit) => {
    const key = `${init?.method ?? 'GET'} ${input}`;
    const answer = answers[key];
    return answer ? answer() : json(404, { error: { code: 'notFound', message: `no stub for ${key}` } });
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

async function settle(container: HTMLElement, text: string) {
  for (let i = 0; i < 50; i++) {
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
    });
    if (container.textContent?.includes(text)) return;
  }
  throw new Error(`never showed "${text}"; showed: ${container.textContent}`);
}

let container: HTMLElement;

beforeEach(() => {
  container = document.createElement('div');
  document.body.append(container);
  window.localStorage.clear();
});

afterEach(() => {
  render(null, container);
  container.remove();
  vi.unstubAllGlobals();
  window.history.replaceState(null, '', '/');
});

describe('App', () => {
  it('sends a signed-out visitor of a team page to sign-in, keeping nothing', async () => {
    window.history.replaceState(null, '', `/app/teams/${TEAM_A}/members`);
    const expired = () => json(401, { error: { code: 'sessionExpired', message: 'sign in again' } });
    stubHub({
      'GET /v1/me': expired,
      'GET /v1/teams': expired,
      'GET /v1/setup': () => json(200, { needsSetup: false, openSignup: false }),
    });
    render(<App />, container);
    await settle(container, 'Welcome back');
    expect(window.location.pathname).toBe('/app/signin');
    expect(window.location.search).toBe('');
    expect(container.querySelector('h1')?.textContent).toBe('Sign in');
  });

  it('opens the remembered team at /app/ and shows its members read-only to a member', async () => {
    window.history.replaceState(null, '', '/app/');
    window.localStorage.setItem(LAST_TEAM_KEY, TEAM_B);
    stubHub({
      'GET /v1/me': () => json(200, ME),
      'GET /v1/teams': () =>
        json(200, {
          teams: [
            { id: TEAM_A, name: 'Alpha', role: 'owner', createdAt: 1 },
            { id: TEAM_B, name: 'Beta', role: 'member', createdAt: 2 },
          ],
        }),
      [`GET /v1/teams/${TEAM_B}/members`]: () =>
        json(200, {
          members: [
            { accountId: 'd'.repeat(32), email: 'o@example.com', name: 'Olga Owner', role: 'owner', joinedAt: 1 },
            { accountId: ME.id, email: ME.email, name: ME.name, role: 'member', joinedAt: 2 },
          ],
        }),
    });
    render(<App />, container);
    await settle(container, 'Olga Owner');
    expect(window.location.pathname).toBe(`/app/teams/${TEAM_B}/members`);
    expect(container.querySelectorAll('select[id^="role-"]').length).toBe(0);
    expect(container.textContent).toContain('Only owners and admins can change roles');
    expect(container.textContent).not.toContain('Invitations');
    // Only the UI preference lives in localStorage.
    expect(Object.keys(window.localStorage)).toEqual([LAST_TEAM_KEY]);
  });

  it('shows the setup form with the code from the fragment, and takes the code out of the address', async () => {
    window.history.replaceState(null, '', '/app/setup#code=FIRST-CODE');
    const fetchMock = stubHub({ 'GET /v1/setup': () => json(200, { needsSetup: true, openSignup: false }) });
    render(<App />, container);
    await settle(container, 'Create owner account');
    expect(window.location.hash).toBe('');
    expect(window.location.href).not.toContain('FIRST-CODE');
    expect(fetchMock).toHaveBeenCalledWith('/v1/setup', expect.objectContaining({ method: 'GET' }));
  });
});
