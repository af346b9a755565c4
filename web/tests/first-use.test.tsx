import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InvitationView } from '../src/api/types';
import { App } from '../src/app';
import { describeInvitation, describeUses } from '../src/invitation-state';
import { roleLockReason } from '../src/roles';
import { describeUserAgent } from '../src/user-agent';

const TEAM = 'a'.repeat(32);
const ME = { id: 'c'.repeat(32), email: 'ada@example.com', name: 'Ada Owner', hasAvatar: false, createdAt: 1 };
const BO = 'd'.repeat(32);

describe('describeUserAgent', () => {
  it.each([
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
      'Chrome 156 on Linux',
    ],
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.7339.16 Safari/537.36',
      'Chrome 140 on Linux',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86',
      'Edge 131 on Windows',
    ],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox 128 on macOS'],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
      'Safari 18 on iOS',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.6723.58 Mobile Safari/537.36',
      'Chrome 130 on Android',
    ],
    ['Python/3.12 aiohttp/3.10.5', 'Python 3'],
    ['', 'Unknown browser'],
    ['(((', 'Unknown browser'],
  ])('%s', (ua, expected) => {
    expect(describeUserAgent(ua)).toBe(expected);
  });
});

describe('invitation state', () => {
  const NOW_MS = 1_000_000 * 1000;
  const base: InvitationView = {
    id: 'i'.repeat(32),
    role: 'member',
    createdBy: ME.id,
    createdAt: 999_000,
    expiresAt: 1_000_000 + 7 * 86400,
    maxUses: 1,
    uses: 0,
    revoked: false,
    usable: true,
    usedBy: [],
  };

  it('a fresh link says when it expires', () => {
    expect(describeInvitation(base, NOW_MS)).toBe('expires in 7 days · 0 of 1 use');
  });

  it('a used link says who used it and when, not when it would expire', () => {
    const used = { ...base, uses: 1, usable: false, usedBy: [{ accountId: BO, name: 'Bo', usedAt: 1_000_000 - 300 }] };
    const text = describeInvitation(used, NOW_MS);
    expect(text).toBe('used by Bo 5 minutes ago');
    expect(text).not.toContain('expires');
  });

  it('names everyone who used a shared link, and counts uses no one recorded', () => {
    const shared = {
      ...base,
      maxUses: 5,
      uses: 3,
      usedBy: [
        { accountId: BO, name: 'Bo', usedAt: 1_000_000 - 7200 },
        { accountId: ME.id, name: 'Cy', usedAt: 1_000_000 - 3600 },
      ],
    };
    expect(describeUses(shared, NOW_MS)).toBe('used by Bo, Cy and 1 more, last 1 hour ago');
    expect(describeInvitation(shared, NOW_MS)).toBe('expires in 7 days · 3 of 5 uses · used by Bo, Cy and 1 more, last 1 hour ago');
    expect(describeUses({ ...base, uses: 2, usedBy: [] }, NOW_MS)).toBe('used 2 times');
  });

  it('an expired or revoked link says so', () => {
    expect(describeInvitation({ ...base, usable: false, expiresAt: 1_000_000 - 86400 }, NOW_MS)).toBe('expired yesterday');
    expect(describeInvitation({ ...base, usable: false, revoked: true }, NOW_MS)).toBe('never used');
  });
});

describe('roleLockReason', () => {
  it('locks the only owner, and no one else', () => {
    expect(roleLockReason('owner', 1)).toBe('A team needs an owner');
    expect(roleLockReason('owner', 2)).toBeNull();
    expect(roleLockReason('admin', 1)).toBeNull();
  });
});

// --- in the app ----------------------------------------------------------------------

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

function stubHub(answers: Record<string, () => Response>) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: string, init?: RequestInit) => {
      const answer = answers[`${init?.method ?? 'GET'} ${input}`];
      return answer ? answer() : json(404, { error: { code: 'notFound', message: 'no stub' } });
    }),
  );
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

function signedInAsOwner(members: unknown[]) {
  stubHub({
    'GET /v1/me': () => json(200, ME),
    'GET /v1/teams': () => json(200, { teams: [{ id: TEAM, name: 'Alpha', role: 'owner', createdAt: 1 }] }),
    [`GET /v1/teams/${TEAM}/members`]: () => json(200, { members }),
    'DELETE /v1/sessions/current': () => new Response(null, { status: 204 }),
    'GET /v1/setup': () => json(200, { needsSetup: false, openSignup: true }),
  });
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

describe('members', () => {
  const owner = { accountId: ME.id, email: ME.email, name: ME.name, role: 'owner', joinedAt: 1, hasAvatar: false };
  const bo = { accountId: BO, email: 'bo@example.com', name: 'Bo', role: 'member', joinedAt: 2, hasAvatar: true };

  it("disables the sole owner's role select and says why; shows a teammate's avatar", async () => {
    window.history.replaceState(null, '', `/app/teams/${TEAM}/members`);
    signedInAsOwner([owner, bo]);
    render(<App />, container);
    await settle(container, 'Bo');
    const own = container.querySelector<HTMLSelectElement>(`#role-${ME.id}`)!;
    expect(own.disabled).toBe(true);
    const reason = container.querySelector(`#${own.getAttribute('aria-describedby')}`);
    expect(reason?.textContent).toBe('A team needs an owner');
    expect(container.querySelector<HTMLSelectElement>(`#role-${BO}`)!.disabled).toBe(false);
    const img = container.querySelector<HTMLImageElement>('img.avatar');
    expect(img?.getAttribute('src')).toBe(`/v1/teams/${TEAM}/members/${BO}/avatar`);
  });

  it('tells the last owner why they cannot leave, instead of offering a leave that fails', async () => {
    window.history.replaceState(null, '', `/app/teams/${TEAM}/members`);
    signedInAsOwner([owner, bo]);
    render(<App />, container);
    await settle(container, 'Bo');
    const leaving = container.querySelector('section[aria-labelledby="leave-title"]')!;
    expect([...leaving.querySelectorAll('button')].map((b) => b.textContent)).toEqual([]);
    expect(leaving.querySelector('.leave-lock')?.textContent).toBe('A team needs an owner. Make someone else an owner first.');
  });

  it('lets an owner change roles when the team has another owner', async () => {
    window.history.replaceState(null, '', `/app/teams/${TEAM}/members`);
    signedInAsOwner([owner, { ...bo, role: 'owner' }]);
    render(<App />, container);
    await settle(container, 'Bo');
    expect(container.querySelector<HTMLSelectElement>(`#role-${ME.id}`)!.disabled).toBe(false);
    expect(container.textContent).not.toContain('A team needs an owner');
    const leaving = container.querySelector('section[aria-labelledby="leave-title"]')!;
    expect([...leaving.querySelectorAll('button')].map((b) => b.textContent)).toEqual(['Leave team']);
  });
});

describe('the phone menu', () => {
  it('closes on Escape and gives focus back to its button', async () => {
    window.history.replaceState(null, '', `/app/teams/${TEAM}/members`);
    signedInAsOwner([]);
    render(<App />, container);
    await settle(container, 'Get started');
    const button = container.querySelector<HTMLButtonElement>('.menu-button')!;
    await act(async () => button.click());
    expect(button.getAttribute('aria-expanded')).toBe('true');
    await act(async () => {
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(button.getAttribute('aria-expanded')).toBe('false');
    expect(document.activeElement).toBe(button);
    // Escape with the menu closed does nothing.
    await act(async () => {
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(button.getAttribute('aria-expanded')).toBe('false');
  });
});

describe('signing out', () => {
  it('says so on the sign-in page', async () => {
    window.history.replaceState(null, '', `/app/teams/${TEAM}/members`);
    signedInAsOwner([]);
    render(<App />, container);
    await settle(container, 'Get started');
    const signOut = container.querySelector<HTMLButtonElement>('button[title="Sign out"]')!;
    await act(async () => signOut.click());
    await settle(container, 'You signed out.');
    expect(window.location.pathname).toBe('/app/signin');
  });
});
