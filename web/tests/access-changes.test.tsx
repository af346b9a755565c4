/** A role change or a removal made elsewhere reaches the shell without a reload. */
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TeamView } from '../src/api/types';
import { App } from '../src/app';
import { ERROR_MESSAGES } from '../src/errors/messages';
import { allowedSection, removedTeams } from '../src/team-changes';

const TEAM_A = 'a'.repeat(32);
const TEAM_B = 'b'.repeat(32);
const ME = { id: 'c'.repeat(32), email: 'mo@example.com', name: 'Mo Member', hasAvatar: false, createdAt: 1 };
const ALPHA: TeamView = { id: TEAM_A, name: 'Alpha', role: 'admin', createdAt: 1 };
const BETA: TeamView = { id: TEAM_B, name: 'Beta', role: 'member', createdAt: 2 };

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** A hub whose answer to GET /v1/teams is whatever `teams` holds when asked. */
function stubHub(teams: { now: TeamView[] }) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: string, init?: RequestInit) => {
      const key = `${init?.method ?? 'GET'} ${input}`;
      if (key === 'GET /v1/me') return json(200, ME);
      if (key === 'GET /v1/teams') return json(200, { teams: teams.now });
      if (key.endsWith('/members')) return json(200, { members: [] });
      if (key.endsWith('/invitations')) return json(200, { invitations: [] });
      if (key.endsWith('/hosts')) return json(200, { hosts: [] });
      return json(404, { error: { code: 'notFound', message: `no stub for ${key}` } });
    }),
  );
}

async function until(check: () => boolean, container: HTMLElement) {
  for (let i = 0; i < 50; i++) {
    await act(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
    });
    if (check()) return;
  }
  throw new Error(`never happened; showed: ${container.textContent}`);
}

const navLabels = (container: HTMLElement) =>
  [...container.querySelectorAll('nav[aria-label="Team pages"] a')].map((link) => link.textContent?.trim());
const switcherTeams = (container: HTMLElement) =>
  [...container.querySelectorAll('#team-switcher option')].map((option) => option.textContent?.trim());

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

describe('a change of access made elsewhere', () => {
  it('applies a new role to the sidebar, and leaves a page the role no longer allows', async () => {
    const teams = { now: [ALPHA, BETA] };
    stubHub(teams);
    window.history.replaceState(null, '', `/app/teams/${TEAM_A}/invitations`);
    render(<App />, container);
    await until(() => navLabels(container).includes('Invitations'), container);
    expect(container.querySelector('.team-switcher-role')?.textContent).toBe('Your role: Admin');

    teams.now = [{ ...ALPHA, role: 'member' }, BETA];
    window.dispatchEvent(new Event('focus'));
    await until(() => !navLabels(container).includes('Invitations'), container);
    expect(container.querySelector('.team-switcher-role')?.textContent).toBe('Your role: Member');
    expect(window.location.pathname).toBe(`/app/teams/${TEAM_A}/members`);
  });

  it('keeps the page open when the new role still allows it', async () => {
    const teams = { now: [ALPHA] };
    stubHub(teams);
    window.history.replaceState(null, '', `/app/teams/${TEAM_A}/hosts`);
    render(<App />, container);
    await until(() => navLabels(container).includes('Invitations'), container);
    teams.now = [{ ...ALPHA, role: 'member' }];
    window.dispatchEvent(new Event('focus'));
    await until(() => !navLabels(container).includes('Invitations'), container);
    expect(window.location.pathname).toBe(`/app/teams/${TEAM_A}/hosts`);
  });

  it('says the member was removed, in the team’s name, and drops the team from the switcher', async () => {
    const teams = { now: [ALPHA, BETA] };
    stubHub(teams);
    window.history.replaceState(null, '', `/app/teams/${TEAM_A}/members`);
    render(<App />, container);
    await until(() => switcherTeams(container).includes('Alpha'), container);

    teams.now = [BETA];
    window.dispatchEvent(new Event('focus'));
    await until(() => container.querySelector('h1')?.textContent === 'You were removed from Alpha', container);
    expect(container.textContent).toContain(ERROR_MESSAGES.get('removedFromTeam'));
    expect(switcherTeams(container)).not.toContain('Alpha');
    expect(container.textContent).not.toContain('Reconnect');
  });
});

describe('removedTeams', () => {
  it('notes a team gone from the fresh list, and forgets one that is back', () => {
    const removed = removedTeams([ALPHA, BETA], [BETA], []);
    expect(removed).toEqual([{ id: TEAM_A, name: 'Alpha' }]);
    expect(removedTeams([BETA], [BETA], removed)).toEqual(removed);
    expect(removedTeams([BETA], [ALPHA, BETA], removed)).toEqual([]);
  });
});

describe('allowedSection', () => {
  it('keeps the page a role allows and sends a member from invitations to members', () => {
    expect(allowedSection('invitations', 'admin')).toBe('invitations');
    expect(allowedSection('invitations', 'member')).toBe('members');
    expect(allowedSection('hosts', 'member')).toBe('hosts');
  });
});
