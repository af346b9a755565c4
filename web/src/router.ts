/**
 * A tiny history router for the client's pages under /app/.
 *
 * `parseRoute` and `routePath` turn an address into a `Route` and back; `navigate` changes the
 * address and tells every subscriber; `useRoute` is the hook the app renders from.
 */

import { useEffect, useState } from 'preact/hooks';

export const BASE = '/app';

export type TeamSection = 'start' | 'members' | 'invitations' | 'hosts' | 'tokens';

/** A host screen's sections; an address may name the one to open on. */
export const HOST_SECTIONS = ['chat', 'tabs', 'profiles', 'proxies', 'agents', 'skills', 'providers', 'usage', 'vault', 'search', 'webhooks', 'mcp', 'workspace', 'notifications'] as const;
export type HostSection = (typeof HOST_SECTIONS)[number];

export type Route =
  | { name: 'home' }
  | { name: 'setup' }
  | { name: 'signin'; next: string | null }
  | { name: 'signup' }
  | { name: 'join'; code: string }
  | { name: 'createTeam' }
  | { name: 'team'; teamId: string; section: TeamSection }
  /** `agentId` and `threadId` name the open chat (ids only: an address never holds content). */
  | { name: 'host'; teamId: string; hostId: string; section?: HostSection; agentId?: string; threadId?: string }
  | { name: 'account' }
  | { name: 'notFound'; path: string };

const TEAM_SECTIONS: readonly TeamSection[] = ['start', 'members', 'invitations', 'hosts', 'tokens'];

function decode(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

/** Only an address inside the app may be a `next` target (no other site, no `//host`). */
export function safeNext(next: string | null): string | null {
  if (next === null) return null;
  if (next !== BASE && !next.startsWith(`${BASE}/`)) return null;
  if (next.includes('\\') || next.includes('//')) return null;
  return next;
}

export function parseRoute(pathname: string, search = ''): Route {
  if (pathname !== BASE && !pathname.startsWith(`${BASE}/`)) {
    return { name: 'notFound', path: pathname };
  }
  const parts = pathname
    .slice(BASE.length)
    .split('/')
    .filter((part) => part !== '');
  const [first, second, third, fourth, fifth, sixth, seventh] = parts;
  if (parts.length === 0) return { name: 'home' };
  if (parts.length === 1) {
    switch (first) {
      case 'setup':
        return { name: 'setup' };
      case 'signin':
        return { name: 'signin', next: safeNext(new URLSearchParams(search).get('next')) };
      case 'signup':
        return { name: 'signup' };
      case 'account':
        return { name: 'account' };
    }
  }
  if (parts.length === 2 && first === 'join' && second !== undefined) {
    const code = decode(second);
    if (code) return { name: 'join', code };
  }
  if (parts.length === 2 && first === 'teams' && second === 'new') return { name: 'createTeam' };
  if (parts.length === 3 && first === 'teams' && second !== undefined && second !== 'new') {
    const teamId = decode(second);
    const section = TEAM_SECTIONS.find((s) => s === third);
    if (teamId && section) return { name: 'team', teamId, section };
  }
  if (parts.length === 4 && first === 'teams' && third === 'hosts' && second !== undefined && fourth !== undefined) {
    const teamId = decode(second);
    const hostId = decode(fourth);
    if (teamId && hostId) return { name: 'host', teamId, hostId };
  }
  if (parts.length === 5 && first === 'teams' && third === 'hosts' && second !== undefined && fourth !== undefined) {
    const teamId = decode(second);
    const hostId = decode(fourth);
    const section = HOST_SECTIONS.find((s) => s === fifth);
    if (teamId && hostId && section) return { name: 'host', teamId, hostId, section };
  }
  // The open chat: …/hosts/<host>/chat/<agent>[/<thread>].
  if ((parts.length === 6 || parts.length === 7) && first === 'teams' && third === 'hosts' && fifth === 'chat' && second !== undefined && fourth !== undefined && sixth !== undefined) {
    const teamId = decode(second);
    const hostId = decode(fourth);
    const agentId = decode(sixth);
    if (teamId && hostId && agentId) {
      if (seventh === undefined) return { name: 'host', teamId, hostId, section: 'chat', agentId };
      const threadId = decode(seventh);
      if (threadId) return { name: 'host', teamId, hostId, section: 'chat', agentId, threadId };
    }
  }
  return { name: 'notFound', path: pathname };
}

export function routePath(route: Route): string {
  switch (route.name) {
    case 'home':
      return `${BASE}/`;
    case 'setup':
      return `${BASE}/setup`;
    case 'signin':
      return route.next
        ? `${BASE}/signin?${new URLSearchParams({ next: route.next }).toString()}`
        : `${BASE}/signin`;
    case 'signup':
      return `${BASE}/signup`;
    case 'join':
      return `${BASE}/join/${encodeURIComponent(route.code)}`;
    case 'createTeam':
      return `${BASE}/teams/new`;
    case 'team':
      return `${BASE}/teams/${encodeURIComponent(route.teamId)}/${route.section}`;
    case 'host': {
      const host = `${BASE}/teams/${encodeURIComponent(route.teamId)}/hosts/${encodeURIComponent(route.hostId)}`;
      if (route.agentId) return `${host}/chat/${encodeURIComponent(route.agentId)}${route.threadId ? `/${encodeURIComponent(route.threadId)}` : ''}`;
      return `${host}${route.section ? `/${route.section}` : ''}`;
    }
    case 'account':
      return `${BASE}/account`;
    case 'notFound':
      return route.path;
  }
}

type Listener = () => void;
const listeners = new Set<Listener>();
let listeningToPopstate = false;

function notify(): void {
  for (const listener of [...listeners]) listener();
}

/** Call `listener` after every change of address (ours or the back/forward buttons'). */
export function subscribe(listener: Listener): () => void {
  if (!listeningToPopstate && typeof window !== 'undefined') {
    window.addEventListener('popstate', notify);
    listeningToPopstate = true;
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function currentRoute(): Route {
  return parseRoute(window.location.pathname, window.location.search);
}

/** Go to an address inside the app; `replace` keeps it out of the back-button history. */
export function navigate(to: string | Route, options: { replace?: boolean } = {}): void {
  const path = typeof to === 'string' ? to : routePath(to);
  const here = window.location.pathname + window.location.search;
  if (path !== here) {
    if (options.replace) window.history.replaceState(null, '', path);
    else window.history.pushState(null, '', path);
  }
  notify();
}

export function useRoute(): Route {
  const [route, setRoute] = useState<Route>(currentRoute);
  useEffect(() => subscribe(() => setRoute(currentRoute())), []);
  return route;
}
