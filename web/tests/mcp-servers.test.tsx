/**
 * The MCP servers screen: its form's bodies (secrets written, never read back; a new set
 * replaces every saved value), statuses in words kept live from events, Test connection
 * with tools, hints and problems, per-agent switches, and the sign-in through a live view.
 */
import { act } from 'preact/test-utils';
import { describe, expect, it, vi } from 'vitest';
import { McpServersAdmin, MEMBER_REASON } from '../src/components/host/McpServersAdmin';
import { HostCallError, type HostConnection } from '../src/host/connection';
import {
  NEW_SERVER,
  addBody,
  agentSwitch,
  parseArgs,
  replaceSecrets,
  startEdit,
  statusText,
  testOutcome,
  toolSwitch,
  updateBody,
  type McpServerView,
} from '../src/host/mcp-servers';
import { ERROR_MESSAGES } from '../src/errors/messages';
import { cancelMcpSignIn, signInEnd, startMcpSignIn } from '../src/host/mcp-sign-in';
import type { TeamApiEvent } from '../src/host/protocol';
import { button, mountPoint, show, submit, typeInto } from './host-fakes';

const SERVER: McpServerView = {
  id: 'mcp-' + 'a'.repeat(28),
  name: 'notes',
  transport: 'stdio',
  command: '/usr/bin/python3',
  args: ['-m', 'notes_server'],
  url: null,
  env: { NOTES_LABEL: 'set', PYTHONPATH: 'set' },
  headers: {},
  callTimeout: 60,
  enabled: true,
  status: { status: 'idle', reason: null, tools: 0, problems: [], code: null },
  agents: [{ agentId: 'agent-1', unaskedTools: ['list_notes'] }],
  oauthClientId: null,
  oauthClientSecret: null,
  createdAt: 1_800_000_000,
  updatedAt: 1_800_000_000,
};
const HTTP_SERVER: McpServerView = { ...SERVER, id: 'mcp-' + 'b'.repeat(28), name: 'tracker', transport: 'http', command: null, args: [], url: 'https://mcp.example.com/mcp', env: {}, headers: { Authorization: 'set' }, agents: [] };
const TOOLS = {
  tools: [
    { name: 'add_note', fullName: 'mcp__notes__add_note', description: 'Keep a note.', hints: [] },
    { name: 'list_notes', fullName: 'mcp__notes__list_notes', description: 'Every note.', hints: ['read-only'] },
  ],
  status: { status: 'connected', reason: null, tools: 2, problems: ['tree: its input schema refers to itself ($ref cycle)'], code: null },
};
const AGENTS = [
  { id: 'agent-1', name: 'Scribe' },
  { id: 'agent-2', name: 'Scout' },
];

describe('the server form', () => {
  it('adds a stdio server with its arguments one a line and its environment', () => {
    const form = { ...NEW_SERVER, name: 'notes', command: ' python3 ', args: '-m\r\n\nnotes_server\n', secrets: { mode: 'replace' as const, rows: [{ name: 'NOTES_LABEL', value: 'v' }] } };
    expect(addBody(form)).toEqual({ kind: 'send', body: { name: 'notes', transport: 'stdio', callTimeout: 60, command: 'python3', args: ['-m', 'notes_server'], env: { NOTES_LABEL: 'v' } } });
    expect(parseArgs('a\n  \nb c')).toEqual(['a', 'b c']);
  });

  it('adds an HTTP server with its headers', () => {
    const form = { ...NEW_SERVER, name: 'tracker', transport: 'http' as const, url: 'https://mcp.example.com/mcp', callTimeout: '30', secrets: { mode: 'replace' as const, rows: [{ name: 'Authorization', value: 'Bearer x' }] } };
    expect(addBody(form)).toEqual({ kind: 'send', body: { name: 'tracker', transport: 'http', callTimeout: 30, url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } } });
  });

  it('refuses what the host would, in words', () => {
    const ok = { ...NEW_SERVER, name: 'notes', command: 'x' };
    expect(addBody({ ...ok, name: 'Bad Name' })).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/^A name is/) });
    expect(addBody({ ...ok, command: ' ' })).toEqual({ kind: 'refused', reason: 'Write the command that starts the server.' });
    expect(addBody({ ...ok, callTimeout: '0' })).toMatchObject({ kind: 'refused' });
    expect(addBody({ ...ok, transport: 'http', url: 'ftp://x' })).toMatchObject({ kind: 'refused' });
    expect(addBody({ ...ok, secrets: { mode: 'replace', rows: [{ name: 'A=B', value: '1' }] } })).toMatchObject({ kind: 'refused', reason: expect.stringContaining('not a variable name') });
    expect(addBody({ ...ok, secrets: { mode: 'replace', rows: [{ name: 'KEY', value: '' }] } })).toEqual({ kind: 'refused', reason: 'Write the value of KEY, or remove it.' });
    expect(addBody({ ...ok, secrets: { mode: 'replace', rows: [{ name: 'K', value: '1' }, { name: 'K', value: '2' }] } })).toEqual({ kind: 'refused', reason: 'K is written twice.' });
    // An empty row is no row.
    expect(addBody({ ...ok, secrets: { mode: 'replace', rows: [{ name: '', value: '' }] } })).toMatchObject({ kind: 'send', body: { env: {} } });
  });

  it('edits with only what changed, the saved values kept unless a new set is written', () => {
    const opened = startEdit(SERVER);
    expect(opened.secrets).toEqual({ mode: 'keep', names: ['NOTES_LABEL', 'PYTHONPATH'] });
    expect(updateBody(SERVER, opened)).toEqual({ kind: 'nothing' });
    expect(updateBody(SERVER, { ...opened, callTimeout: '5' })).toEqual({ kind: 'send', body: { id: SERVER.id, callTimeout: 5 } });
    expect(updateBody(SERVER, { ...opened, args: '-m\nother' })).toEqual({ kind: 'send', body: { id: SERVER.id, transport: 'stdio', command: '/usr/bin/python3', args: ['-m', 'other'] } });
    const replaced = replaceSecrets(['NOTES_LABEL']);
    expect(replaced).toEqual({ mode: 'replace', rows: [{ name: 'NOTES_LABEL', value: '' }] });
    expect(updateBody(SERVER, { ...opened, secrets: { mode: 'replace', rows: [{ name: 'NOTES_LABEL', value: 'new' }] } })).toEqual({ kind: 'send', body: { id: SERVER.id, env: { NOTES_LABEL: 'new' } } });
    // Clear all: an empty set.
    expect(updateBody(SERVER, { ...opened, secrets: { mode: 'replace', rows: [] } })).toEqual({ kind: 'send', body: { id: SERVER.id, env: {} } });
    // Another transport: its address, and headers written anew.
    expect(updateBody(SERVER, { ...opened, transport: 'http', url: 'https://x.example/mcp' })).toMatchObject({ kind: 'refused' });
    expect(updateBody(SERVER, { ...opened, transport: 'http', url: 'https://x.example/mcp', secrets: { mode: 'replace', rows: [] } })).toEqual({ kind: 'send', body: { id: SERVER.id, transport: 'http', url: 'https://x.example/mcp', headers: {} } });
    expect(updateBody(HTTP_SERVER, { ...startEdit(HTTP_SERVER), name: 'tracker-2' })).toEqual({ kind: 'send', body: { id: HTTP_SERVER.id, name: 'tracker-2' } });
  });

  it('enters an OAuth client for an HTTP server, its secret written and never read back', () => {
    const form = { ...NEW_SERVER, name: 'wiki', transport: 'http' as const, url: 'https://wiki.example/mcp', clientId: ' crewhost ', clientSecret: 's3cret' };
    expect(addBody(form)).toEqual({ kind: 'send', body: { name: 'wiki', transport: 'http', callTimeout: 60, url: 'https://wiki.example/mcp', headers: {}, oauthClientId: 'crewhost', oauthClientSecret: 's3cret' } });
    expect(addBody({ ...form, clientId: '' })).toEqual({ kind: 'refused', reason: 'Write the client ID the secret goes with.' });
    expect(addBody({ ...form, clientId: 'a b' })).toMatchObject({ kind: 'refused' });

    const saved: McpServerView = { ...HTTP_SERVER, oauthClientId: 'crewhost', oauthClientSecret: 'set' };
    const opened = startEdit(saved);
    expect([opened.clientId, opened.clientSecret, opened.clientSecretSet]).toEqual(['crewhost', '', true]);
    // Kept as it is: nothing to send.
    expect(updateBody(saved, opened)).toEqual({ kind: 'nothing' });
    expect(updateBody(saved, { ...opened, clientSecret: 'new' })).toEqual({ kind: 'send', body: { id: saved.id, oauthClientSecret: 'new' } });
    expect(updateBody(saved, { ...opened, clientSecretSet: false })).toEqual({ kind: 'send', body: { id: saved.id, oauthClientSecret: '' } });
    // An emptied id clears the client (and its secret with it).
    expect(updateBody(saved, { ...opened, clientId: '' })).toEqual({ kind: 'send', body: { id: saved.id, oauthClientId: '' } });
  });

  it('shows the client fields for an HTTP server and its secret only as set', async () => {
    const saved: McpServerView = { ...HTTP_SERVER, oauthClientId: 'crewhost', oauthClientSecret: 'set' };
    const { connection } = liveConnection({ 'mcp-servers-v1/list': { servers: [saved] } });
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={() => null} />, mount.element);
    expect(row('tracker').textContent).toContain('OAuth client crewhost (secret set)');
  });
});

describe('statuses and outcomes in words', () => {
  it('says each status, and Off for a disabled server', () => {
    const at = (status: McpServerView['status']['status'], reason: string | null = null, code: string | null = null) => ({ status, reason, tools: 3, problems: [], code });
    expect(statusText(true, at('connected')).text).toBe('Connected · 3 tools');
    expect(statusText(true, at('starting')).text).toBe('Starting…');
    expect(statusText(true, at('error', 'the process ended (exit code 3)')).text).toBe('Error: the process ended (exit code 3)');
    expect(statusText(true, at('error', 'not allowed', 'mcpStdioNotAllowed')).text).toBe(`Error: ${ERROR_MESSAGES.get('mcpStdioNotAllowed')}`);
    expect(statusText(true, at('signIn')).text).toBe('Needs sign-in');
    expect(statusText(true, at('signIn', 'its answer came from another issuer', 'mcpSignInIssuerMismatch')).text).toBe(`Needs sign-in: ${ERROR_MESSAGES.get('mcpSignInIssuerMismatch')}`);
    expect(statusText(true, at('idle')).key).toBe('idle');
    expect(statusText(false, at('connected'))).toEqual({ text: 'Off', tone: 'muted', key: 'disabled' });
  });

  it('words a test', () => {
    expect(testOutcome(TOOLS as never)).toEqual({ text: 'Connected: 2 tools offered; 1 not offered (see below).', ok: true });
    expect(testOutcome({ tools: [], status: { status: 'error', reason: 'it did not answer initialize in 20 s', tools: 0, problems: [], code: null } })).toEqual({ text: 'Could not connect: it did not answer initialize in 20 s.', ok: false });
  });

  it('switches an agent and its tools, keeping the others', () => {
    expect(agentSwitch(SERVER, 'agent-2', true)).toEqual({ id: SERVER.id, agentId: 'agent-2', enabled: true, unaskedTools: [] });
    expect(agentSwitch(SERVER, 'agent-1', false)).toEqual({ id: SERVER.id, agentId: 'agent-1', enabled: false, unaskedTools: [] });
    expect(toolSwitch(SERVER, 'agent-1', 'add_note', true)).toEqual({ id: SERVER.id, agentId: 'agent-1', enabled: true, unaskedTools: ['add_note', 'list_notes'] });
    expect(toolSwitch(SERVER, 'agent-1', 'list_notes', false)).toEqual({ id: SERVER.id, agentId: 'agent-1', enabled: true, unaskedTools: [] });
  });
});

/** A connection that answers from a table and delivers the events a test emits. */
function liveConnection(answers: Record<string, unknown>, refuse: Record<string, string> = {}) {
  const calls: Array<[string, unknown]> = [];
  const listeners = new Set<(event: TeamApiEvent) => void>();
  const connection = {
    call: vi.fn(async (route: string, args: unknown) => {
      calls.push([route, args]);
      if (refuse[route]) throw new HostCallError(refuse[route], 'refused');
      const answer = answers[route];
      return typeof answer === 'function' ? (answer as (a: unknown) => unknown)(args) : (answer ?? {});
    }),
    onEvent: (listener: (event: TeamApiEvent) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  } as unknown as HostConnection;
  const emit = (event: TeamApiEvent) => act(() => listeners.forEach((listener) => listener(event)));
  return { connection, calls, emit };
}

const mount = mountPoint();
const noTab = () => null;

function row(name: string): HTMLElement {
  return mount.element.querySelector<HTMLElement>(`[data-mcp-server="${name}"]`)!;
}

describe('McpServersAdmin', () => {
  it('tells a member why they see nothing', async () => {
    const { connection, calls } = liveConnection({});
    await show(<McpServersAdmin connection={connection} role="member" agents={AGENTS} signInServed showTab={noTab} />, mount.element);
    expect(mount.element.textContent).toContain(MEMBER_REASON);
    expect(calls).toEqual([]);
  });

  it('lists servers with their secrets as set, keeps the status live and tests one', async () => {
    const { connection, calls, emit } = liveConnection({ 'mcp-servers-v1/list': { servers: [SERVER, HTTP_SERVER] }, 'mcp-servers-v1/test': TOOLS });
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={noTab} />, mount.element);
    expect(row('notes').textContent).toContain('Environment: NOTES_LABEL set, PYTHONPATH set');
    expect(row('tracker').textContent).toContain('Headers: Authorization set');
    const mark = () => row('notes').querySelector('[data-status]')!;
    expect(mark().getAttribute('data-status')).toBe('idle');
    await emit({ event: 'mcp-server-status', data: { serverId: SERVER.id, status: 'error', reason: 'the process ended (exit code 3); starting again in 2 s', tools: 0, problems: [], code: null } });
    expect(mark().textContent).toBe('Error: the process ended (exit code 3); starting again in 2 s');
    await emit({ event: 'mcp-server-status', data: { serverId: SERVER.id, status: 'connected', reason: null, tools: 2, problems: [] } });
    expect(mark().textContent).toBe('Connected · 2 tools');

    await act(async () => button(row('notes'), 'Test connection').click());
    expect(calls).toContainEqual(['mcp-servers-v1/test', { id: SERVER.id }]);
    expect(row('notes').querySelector('[data-test-outcome]')!.textContent).toBe('Connected: 2 tools offered; 1 not offered (see below).');
    const listNotes = row('notes').querySelector('[data-tool="list_notes"]')!;
    expect(listNotes.querySelector('.mcp-hint')!.textContent).toBe('Read-only');
    expect(row('notes').querySelector('[aria-label="Tools not offered"]')!.textContent).toBe('tree: its input schema refers to itself ($ref cycle)');
  });

  it('adds a server and never shows a value back', async () => {
    const { connection, calls } = liveConnection({ 'mcp-servers-v1/list': { servers: [] }, 'mcp-servers-v1/add': SERVER });
    await show(<McpServersAdmin connection={connection} role="owner" agents={AGENTS} signInServed showTab={noTab} />, mount.element);
    await act(async () => button(mount.element, 'Add an MCP server').click());
    const form = mount.element.querySelector<HTMLFormElement>('form[aria-label="Add an MCP server"]')!;
    await typeInto(form.querySelector<HTMLInputElement>('input[type="text"]')!, 'notes');
    await typeInto(form.querySelector<HTMLInputElement>('input.mono')!, 'python3');
    await typeInto(form.querySelector('textarea')!, '-m\nnotes_server');
    await act(async () => button(form, 'Add a variable').click());
    await typeInto(form.querySelector<HTMLInputElement>('input[aria-label="Name of environment variable 1"]')!, 'NOTES_LABEL');
    await typeInto(form.querySelector<HTMLInputElement>('input[aria-label="Value of environment variable 1"]')!, 's3cret');
    await submit(form);
    expect(calls).toContainEqual(['mcp-servers-v1/add', { name: 'notes', transport: 'stdio', callTimeout: 60, command: 'python3', args: ['-m', 'notes_server'], env: { NOTES_LABEL: 's3cret' } }]);
    expect(mount.element.querySelector('form[aria-label="Add an MCP server"]')).toBeNull();
    expect(mount.element.innerHTML).not.toContain('s3cret');
  });

  it('starts on an address, stdio greyed out, where the host runs no stdio server of the team', async () => {
    const { connection } = liveConnection({ 'mcp-servers-v1/list': { servers: [], stdioAllowed: false } });
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={noTab} />, mount.element);
    await act(async () => button(mount.element, 'Add an MCP server').click());
    const form = mount.element.querySelector<HTMLFormElement>('form[aria-label="Add an MCP server"]')!;
    expect(form.querySelector('select')!.value).toBe('http');
    const stdio = form.querySelector<HTMLOptionElement>('option[value="stdio"]')!;
    expect(stdio.disabled).toBe(true);
    expect(stdio.textContent).toContain('not allowed for this team on this host');
  });

  it('says what a stdio server sees and reaches on this host', async () => {
    const hints = async (list: Record<string, unknown>): Promise<string> => {
      const { connection } = liveConnection({ 'mcp-servers-v1/list': { servers: [], stdioAllowed: true, ...list } });
      await show(null, mount.element); // each host's page anew
      await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={noTab} />, mount.element);
      await act(async () => button(mount.element, 'Add an MCP server').click());
      return mount.element.querySelector<HTMLFormElement>('form[aria-label="Add an MCP server"]')!.textContent!;
    };
    const sandboxed = await hints({ stdioSandboxed: true, stdioNetwork: true, stdioNetworkKind: 'proxied' });
    expect(sandboxed).toContain('in a sandbox');
    expect(sandboxed).toContain('it reaches public addresses alone, through the host’s proxy');
    const shared = await hints({ stdioSandboxed: true, stdioNetwork: true, stdioNetworkKind: 'host' });
    expect(shared).toContain('services on the host’s own loopback included');
    const none = await hints({ stdioSandboxed: true, stdioNetwork: false, stdioNetworkKind: 'none' });
    expect(none).toContain('it reaches nothing of the network');
    // A host of an earlier release says only whether there is a network: its own.
    expect(await hints({ stdioSandboxed: true, stdioNetwork: true })).toContain('what the host reaches');
    const plain = await hints({ stdioSandboxed: false, stdioNetwork: true });
    expect(plain).not.toContain('sandbox');
    expect(plain).toContain('in a folder of the team’s workspace');
  });

  it('shows a refusal by its code, and a form problem before sending', async () => {
    const { connection, calls } = liveConnection({ 'mcp-servers-v1/list': { servers: [] } }, { 'mcp-servers-v1/add': 'mcpAddressRefused' });
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={noTab} />, mount.element);
    await act(async () => button(mount.element, 'Add an MCP server').click());
    const form = mount.element.querySelector<HTMLFormElement>('form[aria-label="Add an MCP server"]')!;
    await typeInto(form.querySelector<HTMLInputElement>('input[type="text"]')!, 'Tracker');
    await submit(form);
    expect(form.textContent).toContain('A name is 1 to 32 lower-case letters');
    expect(calls.filter(([route]) => route === 'mcp-servers-v1/add')).toEqual([]);
    await typeInto(form.querySelector<HTMLInputElement>('input[type="text"]')!, 'tracker');
    await typeInto(form.querySelector('select')!, 'http', 'change');
    await typeInto(form.querySelector<HTMLInputElement>('input[type="url"]')!, 'http://10.0.0.5/mcp');
    await submit(form);
    expect(form.textContent).toContain('it is not a public address');
  });

  it('gives an agent the server and lets it run a tool without asking', async () => {
    const { connection, calls } = liveConnection({ 'mcp-servers-v1/list': { servers: [SERVER] }, 'mcp-servers-v1/test': TOOLS, 'mcp-servers-v1/set_agent': SERVER });
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={noTab} />, mount.element);
    await act(async () => button(row('notes'), 'Agents').click());
    const scout = row('notes').querySelector<HTMLElement>('[data-agent="Scout"]')!;
    await act(async () => scout.querySelector<HTMLInputElement>('input[type="checkbox"]')!.click());
    expect(calls).toContainEqual(['mcp-servers-v1/set_agent', { id: SERVER.id, agentId: 'agent-2', enabled: true, unaskedTools: [] }]);
    const scribe = () => row('notes').querySelector<HTMLElement>('[data-agent="Scribe"]')!;
    // Before the tools load, the one it runs without asking shows.
    expect(scribe().querySelector<HTMLInputElement>('input[aria-label="Scribe runs list_notes without asking"]')!.checked).toBe(true);
    await act(async () => button(scribe(), 'Load the tools').click());
    await act(async () => scribe().querySelector<HTMLInputElement>('input[aria-label="Scribe runs add_note without asking"]')!.click());
    expect(calls).toContainEqual(['mcp-servers-v1/set_agent', { id: SERVER.id, agentId: 'agent-1', enabled: true, unaskedTools: ['add_note', 'list_notes'] }]);
  });

  it('deletes after the question', async () => {
    const { connection, calls } = liveConnection({ 'mcp-servers-v1/list': { servers: [SERVER] }, 'mcp-servers-v1/delete': { deleted: true } });
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={noTab} />, mount.element);
    await act(async () => button(row('notes'), 'Delete').click());
    expect(row('notes').querySelector('[role="group"]')!.getAttribute('aria-label')).toBe('Delete the MCP server notes? Agents lose its tools.');
    await act(async () => button(row('notes'), 'Delete').click());
    expect(calls).toContainEqual(['mcp-servers-v1/delete', { id: SERVER.id }]);
  });
});

describe('signing in to a server', () => {
  const waiting: McpServerView = { ...HTTP_SERVER, status: { status: 'signIn', reason: null, tools: 0, problems: [], code: null } };

  it('calls the host and reads its events', async () => {
    const { connection, calls } = liveConnection({ 'mcp-sign-in-v1/start': { signInId: 's1', tabId: 't1' } });
    expect(await startMcpSignIn(connection, { serverId: waiting.id })).toEqual({ signInId: 's1', tabId: 't1' });
    await cancelMcpSignIn(connection, { signInId: 's1' });
    expect(calls).toEqual([
      ['mcp-sign-in-v1/start', { serverId: waiting.id }],
      ['mcp-sign-in-v1/cancel', { signInId: 's1' }],
    ]);
    const bad = liveConnection({ 'mcp-sign-in-v1/start': { signInId: 's1' } });
    await expect(startMcpSignIn(bad.connection, { serverId: waiting.id })).rejects.toThrow();
    const status = (data: object): TeamApiEvent => ({ event: 'mcp-server-status', data: { serverId: waiting.id, ...data } });
    expect(signInEnd(status({ status: 'connected' }), waiting.id)).toEqual({ kind: 'signedIn' });
    expect(signInEnd(status({ status: 'error', reason: 'the server refused the code' }), waiting.id)).toEqual({ kind: 'failed', reason: 'the server refused the code' });
    expect(signInEnd(status({ status: 'signIn', reason: 'the sign-in was cancelled' }), waiting.id)).toEqual({ kind: 'failed', reason: 'the sign-in was cancelled' });
    expect(signInEnd(status({ status: 'signIn' }), waiting.id)).toBeNull();
    // A cause with a code reads as its sentence.
    expect(signInEnd(status({ status: 'signIn', reason: 'its answer came from another issuer', code: 'mcpSignInIssuerMismatch' }), waiting.id)).toEqual({
      kind: 'failed',
      reason: ERROR_MESSAGES.get('mcpSignInIssuerMismatch'),
    });
    expect(signInEnd(status({ status: 'starting' }), waiting.id)).toBeNull();
    expect(signInEnd(status({ status: 'connected' }), 'another')).toBeNull();
    expect(signInEnd({ event: 'mcp-servers-changed', data: {} }, waiting.id)).toBeNull();
  });

  it('shows the sign-in tab and ends when the server connects', async () => {
    const { connection, calls, emit } = liveConnection({ 'mcp-servers-v1/list': { servers: [waiting] }, 'mcp-sign-in-v1/start': { signInId: 's1', tabId: 't1' } });
    const showTab = (tabId: string) => <div data-live-view={tabId} />;
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={showTab} />, mount.element);
    expect(row('tracker').querySelector('[data-status]')!.textContent).toBe('Needs sign-in');
    await act(async () => button(row('tracker'), 'Sign in').click());
    await act(async () => {});
    expect(calls).toContainEqual(['mcp-sign-in-v1/start', { serverId: waiting.id }]);
    expect(row('tracker').querySelector('[data-live-view="t1"]')).not.toBeNull();
    await emit({ event: 'mcp-server-status', data: { serverId: waiting.id, status: 'connected', reason: null, tools: 4, problems: [] } });
    expect(row('tracker').querySelector('[data-live-view]')).toBeNull();
    expect(row('tracker').textContent).toContain('Signed in.');
    expect(row('tracker').querySelector('[data-status]')!.textContent).toBe('Connected · 4 tools');
  });

  it('shows why a sign-in failed, and cancels one', async () => {
    const { connection, calls, emit } = liveConnection({ 'mcp-servers-v1/list': { servers: [waiting] }, 'mcp-sign-in-v1/start': { signInId: 's2', tabId: 't2' } });
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed showTab={(tabId) => <div data-live-view={tabId} />} />, mount.element);
    await act(async () => button(row('tracker'), 'Sign in').click());
    await act(async () => {});
    await emit({ event: 'mcp-server-status', data: { serverId: waiting.id, status: 'signIn', reason: 'the authorization server refused the code', tools: 0, problems: [], code: null } });
    expect(row('tracker').textContent).toContain('The sign-in did not work: the authorization server refused the code');
    await act(async () => button(row('tracker'), 'Sign in again').click());
    await act(async () => {});
    await act(async () => button(row('tracker'), 'Cancel the sign-in').click());
    expect(calls).toContainEqual(['mcp-sign-in-v1/cancel', { signInId: 's2' }]);
    expect(row('tracker').querySelector('[data-live-view]')).toBeNull();
  });

  it('says a host without the sign-in cannot do it', async () => {
    const { connection } = liveConnection({ 'mcp-servers-v1/list': { servers: [waiting] } });
    await show(<McpServersAdmin connection={connection} role="admin" agents={AGENTS} signInServed={false} showTab={noTab} />, mount.element);
    expect(row('tracker').textContent).toContain('which this host cannot do yet');
  });
});
