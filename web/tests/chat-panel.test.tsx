/**
 * The chat as the host screen shows it: the open chat is in the address (ids only) and comes
 * back after a reload, or falls back to the agent's chats with a short message when it is no
 * longer there; in a shared chat another member's messages carry their name.
 */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChatPanel, type AgentView, type ChatSelection } from '../src/components/host/ChatPanel';
import { ChatMemory } from '../src/host/chat-memory';
import type { HostConnection } from '../src/host/connection';
import { parseRoute, routePath, type Route } from '../src/router';
import { hostAddress, useAddress } from '../src/screens/HostScreen';
import { fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';

const TEAM = '1'.repeat(32);
const HOST = 'h1';
const SCOUT = 'a'.repeat(32);
const GONE = 'b'.repeat(32);
const THREAD = 'c'.repeat(32);
const OWNER = 'd'.repeat(32);
const MEMBER = 'e'.repeat(32);
const NAMES = new Map([
  [OWNER, 'First Owner'],
  [MEMBER, 'Mo Member'],
]);

function agent(id: string, name: string): AgentView {
  return { id, name, instructions: '', provider: 'anthropic', model: null, permissions: {}, maxToolCalls: null, ownBrowserSession: false, browserProfileId: null, createdAt: 1, updatedAt: 1, mayAsk: [] };
}

function contents(thread: { createdBy: string; shared: boolean }, extra: Record<string, unknown> = {}) {
  return {
    thread: { id: THREAD, agentId: SCOUT, title: 'Press the button', createdAt: 1, updatedAt: 1, parentThreadId: null, parentAgentId: null, ...thread },
    messages: [
      { role: 'user', text: 'Press the button', attachments: [] },
      { role: 'assistant', text: 'Pressed.' },
    ],
    turns: [],
    runningTurnId: null,
    runningText: '',
    tasks: [],
    queued: [],
    delegations: [],
    ...extra,
  };
}

const mount = mountPoint();
let chosen: ChatSelection[] = [];

beforeEach(() => {
  chosen = [];
  vi.stubGlobal('ResizeObserver', class { observe() {} disconnect() {} });
});
afterEach(() => vi.unstubAllGlobals());

/** The panel with its selection held as the host screen holds it. */
function Chat(props: { connection: HostConnection; meId: string; opening: ChatSelection; agentsLoaded?: boolean }) {
  const [selection, setSelection] = useState(props.opening);
  return (
    <ChatPanel
      connection={props.connection}
      meId={props.meId}
      agents={[agent(SCOUT, 'Scout')]}
      agentsLoaded={props.agentsLoaded ?? true}
      agentsError={null}
      memberNames={NAMES}
      memory={new ChatMemory()}
      selection={selection}
      onSelection={(next) => {
        chosen.push(next);
        setSelection(next);
      }}
      requests={[]}
      alwaysAllow={null}
      manager={false}
      onWatch={null}
      onProviders={null}
      onBudgets={null}
    />
  );
}

async function openChat(connection: HostConnection, meId: string, opening: ChatSelection, agentsLoaded?: boolean) {
  await show(<Chat connection={connection} meId={meId} opening={opening} agentsLoaded={agentsLoaded} />, mount.element);
  await act(async () => {});
}

describe('the open chat in the address', () => {
  it('names the section, the agent and the thread by id, and only in Chat', () => {
    const open = hostAddress(TEAM, HOST, 'chat', { agentId: SCOUT, threadId: THREAD });
    expect(routePath(open)).toBe(`/app/teams/${TEAM}/hosts/${HOST}/chat/${SCOUT}/${THREAD}`);
    expect(parseRoute(routePath(open))).toEqual(open);
    const agentOnly = hostAddress(TEAM, HOST, 'chat', { agentId: SCOUT, threadId: null });
    expect(parseRoute(routePath(agentOnly))).toEqual({ name: 'host', teamId: TEAM, hostId: HOST, section: 'chat', agentId: SCOUT });
    expect(routePath(hostAddress(TEAM, HOST, 'chat', { agentId: null, threadId: null }))).toBe(`/app/teams/${TEAM}/hosts/${HOST}`);
    expect(routePath(hostAddress(TEAM, HOST, 'tabs', { agentId: SCOUT, threadId: THREAD }))).toBe(`/app/teams/${TEAM}/hosts/${HOST}/tabs`);
  });

  it('follows the screen in place, adding no history entry', async () => {
    window.history.replaceState(null, '', `/app/teams/${TEAM}/hosts/${HOST}`);
    const before = window.history.length;
    function Screen({ route }: { route: Route }) {
      useAddress(route);
      return null;
    }
    await show(<Screen route={hostAddress(TEAM, HOST, 'chat', { agentId: SCOUT, threadId: THREAD })} />, mount.element);
    expect(window.location.pathname).toBe(`/app/teams/${TEAM}/hosts/${HOST}/chat/${SCOUT}/${THREAD}`);
    expect(window.history.length).toBe(before);
    window.history.replaceState(null, '', '/');
  });

  it('opens the chat it names, mid-turn too', async () => {
    const { connection, calls } = fakeConnection({
      'threads-v1/list': { threads: [] },
      'threads-v1/get': contents({ createdBy: OWNER, shared: false }, { runningTurnId: 't1', runningText: 'Working on it' }),
    });
    await openChat(connection, OWNER, { agentId: SCOUT, threadId: THREAD });
    expect(calls).toContainEqual(['threads-v1/get', { threadId: THREAD }]);
    expect(mount.element.querySelector('.conversation-title')?.textContent).toBe('Press the button');
    expect(mount.element.querySelector('.conversation-status')?.getAttribute('data-turn-status')).toBe('running');
    expect([...mount.element.querySelectorAll('button')].some((b) => b.textContent === 'Stop')).toBe(true);
    expect(chosen).toEqual([]);
  });

  it('falls back to the agent’s chats, saying why, when the thread is no longer there', async () => {
    const { connection } = fakeConnection({ 'threads-v1/list': { threads: [] } }, { 'threads-v1/get': 'threadNotFound' });
    await openChat(connection, MEMBER, { agentId: SCOUT, threadId: THREAD });
    expect(chosen).toEqual([{ agentId: SCOUT, threadId: null }]);
    expect(mount.element.querySelector('.conversation')).toBeNull();
    expect(mount.element.querySelector('.chat-side')?.textContent).toContain('That conversation no longer exists, or it is not shared with you.');
    expect(mount.element.querySelector('.chat-agent.is-selected')?.textContent).toBe('Scout');
  });

  it('falls back to the agents when the agent is gone, once the list has come', async () => {
    const { connection } = fakeConnection({ 'threads-v1/list': { threads: [] } });
    await openChat(connection, MEMBER, { agentId: GONE, threadId: THREAD }, false);
    expect(chosen).toEqual([]);
    render(null, mount.element);
    await openChat(connection, MEMBER, { agentId: GONE, threadId: THREAD });
    expect(chosen).toEqual([{ agentId: null, threadId: null }]);
    expect(mount.element.querySelector('.chat-side')?.textContent).toContain('That agent no longer exists.');
  });
});

describe('who wrote a message', () => {
  it('names another member above their messages in a shared chat, apart from the viewer’s own', async () => {
    const { connection } = fakeConnection({
      'threads-v1/list': { threads: [] },
      'threads-v1/get': contents({ createdBy: OWNER, shared: true }),
      'threads-v1/send': { turnId: 't2', queued: null },
    });
    await openChat(connection, MEMBER, { agentId: SCOUT, threadId: THREAD });
    const [theirs] = mount.element.querySelectorAll('.chat-user-text');
    expect(theirs!.classList.contains('is-others')).toBe(true);
    expect(theirs!.querySelector('.chat-writer')?.textContent).toBe('First Owner');

    await typeInto(mount.element.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]')!, 'Press it again');
    await submit(mount.element.querySelector<HTMLFormElement>('form.composer')!);
    await act(async () => {});
    const mine = [...mount.element.querySelectorAll('.chat-user-text')].at(-1)!;
    expect(mine.textContent).toBe('Press it again');
    expect(mine.classList.contains('is-others')).toBe(false);
    expect(mine.querySelector('.chat-writer')).toBeNull();
  });

  it('leaves the starter’s own messages unnamed', async () => {
    const { connection } = fakeConnection({ 'threads-v1/list': { threads: [] }, 'threads-v1/get': contents({ createdBy: OWNER, shared: true }) });
    await openChat(connection, OWNER, { agentId: SCOUT, threadId: THREAD });
    const [own] = mount.element.querySelectorAll('.chat-user-text');
    expect(own!.classList.contains('is-others')).toBe(false);
    expect(mount.element.querySelector('.chat-writer')).toBeNull();
  });
});
