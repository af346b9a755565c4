import { afterEach, describe, expect, it, vi } from 'vitest';
import { navigate, parseRoute, routePath, safeNext, subscribe, type Route } from '../src/router';

const TEAM = '0123456789abcdef0123456789abcdef';

describe('parseRoute', () => {
  it.each<[string, string, Route]>([
    ['/app', '', { name: 'home' }],
    ['/app/', '', { name: 'home' }],
    ['/app/setup', '', { name: 'setup' }],
    ['/app/signin', '', { name: 'signin', next: null }],
    ['/app/signin/', '', { name: 'signin', next: null }],
    ['/app/signin', '?next=%2Fapp%2Fjoin%2Fabc', { name: 'signin', next: '/app/join/abc' }],
    ['/app/signup', '', { name: 'signup' }],
    ['/app/join/AbC-12_x', '', { name: 'join', code: 'AbC-12_x' }],
    ['/app/join/a%20b', '', { name: 'join', code: 'a b' }],
    ['/app/teams/new', '', { name: 'createTeam' }],
    [`/app/teams/${TEAM}/start`, '', { name: 'team', teamId: TEAM, section: 'start' }],
    [`/app/teams/${TEAM}/members`, '', { name: 'team', teamId: TEAM, section: 'members' }],
    [`/app/teams/${TEAM}/invitations`, '', { name: 'team', teamId: TEAM, section: 'invitations' }],
    [`/app/teams/${TEAM}/hosts`, '', { name: 'team', teamId: TEAM, section: 'hosts' }],
    [`/app/teams/${TEAM}/hosts/h1`, '', { name: 'host', teamId: TEAM, hostId: 'h1' }],
    [`/app/teams/${TEAM}/hosts/h1/providers`, '', { name: 'host', teamId: TEAM, hostId: 'h1', section: 'providers' }],
    [`/app/teams/${TEAM}/hosts/h1/chat/a1`, '', { name: 'host', teamId: TEAM, hostId: 'h1', section: 'chat', agentId: 'a1' }],
    [`/app/teams/${TEAM}/hosts/h1/chat/a1/t1`, '', { name: 'host', teamId: TEAM, hostId: 'h1', section: 'chat', agentId: 'a1', threadId: 't1' }],
    ['/app/account', '', { name: 'account' }],
  ])('%s%s', (path, search, route) => {
    expect(parseRoute(path, search)).toEqual(route);
  });

  it.each(['/', '/apps', '/other/app', '/app/nope', `/app/teams/${TEAM}`, `/app/teams/${TEAM}/secrets`, '/app/join', '/app/join/%E0%A4%A', `/app/teams/${TEAM}/hosts/h1/secrets`, `/app/teams/${TEAM}/hosts/h1/tabs/a1`, `/app/teams/${TEAM}/hosts/h1/chat/a1/t1/x`, `/app/teams/${TEAM}/hosts/h1/chat/a1/%E0%A4%A`])(
    '%s is not found',
    (path) => {
      expect(parseRoute(path).name).toBe('notFound');
    },
  );

  it('drops a next that leaves the app', () => {
    expect(parseRoute('/app/signin', '?next=https%3A%2F%2Fevil.example').name).toBe('signin');
    expect(parseRoute('/app/signin', '?next=https%3A%2F%2Fevil.example')).toEqual({ name: 'signin', next: null });
    expect(safeNext('//evil.example/app/')).toBeNull();
    expect(safeNext('/app//evil.example')).toBeNull();
    expect(safeNext('/app/\\evil')).toBeNull();
    expect(safeNext('/application')).toBeNull();
    expect(safeNext('/app/account')).toBe('/app/account');
  });
});

describe('routePath', () => {
  const routes: Route[] = [
    { name: 'home' },
    { name: 'setup' },
    { name: 'signin', next: null },
    { name: 'signin', next: '/app/join/xyz' },
    { name: 'signup' },
    { name: 'join', code: 'a b/c' },
    { name: 'createTeam' },
    { name: 'team', teamId: TEAM, section: 'members' },
    { name: 'team', teamId: TEAM, section: 'hosts' },
    { name: 'host', teamId: TEAM, hostId: 'h1' },
    { name: 'host', teamId: TEAM, hostId: 'h1', section: 'agents' },
    { name: 'host', teamId: TEAM, hostId: 'h1', section: 'chat', agentId: 'a1', threadId: 't1' },
    { name: 'account' },
  ];

  it.each(routes)('round-trips %j', (route) => {
    const url = new URL(routePath(route), 'http://hub.test');
    expect(parseRoute(url.pathname, url.search)).toEqual(route);
  });

  it('makes addresses under /app', () => {
    expect(routePath({ name: 'home' })).toBe('/app/');
    expect(routePath({ name: 'team', teamId: TEAM, section: 'invitations' })).toBe(`/app/teams/${TEAM}/invitations`);
  });
});

describe('navigate and subscribe', () => {
  afterEach(() => window.history.replaceState(null, '', '/'));

  it('pushes a new entry and tells subscribers', () => {
    window.history.replaceState(null, '', '/app/');
    const before = window.history.length;
    const listener = vi.fn();
    const stop = subscribe(listener);
    navigate({ name: 'account' });
    expect(window.location.pathname).toBe('/app/account');
    expect(window.history.length).toBe(before + 1);
    expect(listener).toHaveBeenCalledTimes(1);
    stop();
  });

  it('replaces the entry when asked', () => {
    window.history.replaceState(null, '', '/app/');
    const before = window.history.length;
    navigate('/app/signin', { replace: true });
    expect(window.location.pathname).toBe('/app/signin');
    expect(window.history.length).toBe(before);
  });

  it('tells subscribers about back/forward (popstate)', () => {
    const listener = vi.fn();
    const stop = subscribe(listener);
    window.dispatchEvent(new PopStateEvent('popstate'));
    expect(listener).toHaveBeenCalledTimes(1);
    stop();
    window.dispatchEvent(new PopStateEvent('popstate'));
    expect(listener).toHaveBeenCalledTimes(1);
  });
});
