/**
 * The MCP servers screen's logic as values: the add and edit form and the bodies
 * `mcp-servers-v1/add` and `mcp-servers-v1/update` take, a server's status in words (kept
 * live from `mcp-server-status` events), and the body of an agent's switches.
 *
 * Environment values (stdio) and headers (HTTP) are written, never read back: a saved
 * server names them only. The host replaces them all at once, so the edit form either
 * keeps every saved value or takes a new set (the saved names with empty values to fill
 * in, rows to add or remove); a name left out is cleared.
 */

import { ERROR_MESSAGES } from '../errors/messages';
import type { EventData, RouteArgs, RouteResult } from './protocol';

export type McpServerView = RouteResult<'mcp-servers-v1/list'>['servers'][number];
export type McpStatusView = McpServerView['status'];
export type McpToolView = RouteResult<'mcp-servers-v1/test'>['tools'][number];
export type McpTransport = McpServerView['transport'];
export type AddMcpServerArgs = RouteArgs<'mcp-servers-v1/add'>;
export type UpdateMcpServerArgs = RouteArgs<'mcp-servers-v1/update'>;
export type SetAgentArgs = RouteArgs<'mcp-servers-v1/set_agent'>;
export type McpStatusEvent = EventData<'mcp-server-status'>;

/** A server's name: part of its tools' names (`mcp__<name>__<tool>`). */
export const NAME_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
export const DEFAULT_CALL_TIMEOUT = 60;

/** One environment variable or header being written: a name and its value. */
export interface SecretRow {
  name: string;
  value: string;
}

/** The form's secrets: every saved value kept, or a new set that replaces them. */
export type SecretsEdit = { mode: 'keep'; names: string[] } | { mode: 'replace'; rows: SecretRow[] };

export interface McpServerForm {
  name: string;
  transport: McpTransport;
  command: string;
  /** One argument a line. */
  args: string;
  url: string;
  secrets: SecretsEdit;
  callTimeout: string;
  /** HTTP: an OAuth client registered by hand (for a server that registers none). */
  clientId: string;
  /** A new secret of that client; empty keeps the saved one. */
  clientSecret: string;
  /** The saved secret stays (false once the person removes it). */
  clientSecretSet: boolean;
}

export const NEW_SERVER: McpServerForm = {
  name: '',
  transport: 'stdio',
  command: '',
  args: '',
  url: '',
  secrets: { mode: 'replace', rows: [] },
  callTimeout: String(DEFAULT_CALL_TIMEOUT),
  clientId: '',
  clientSecret: '',
  clientSecretSet: false,
};

export type FormOutcome<B> = { kind: 'send'; body: B } | { kind: 'nothing' } | { kind: 'refused'; reason: string };

/** The saved names of a server's secrets (its environment's or its headers'). */
export function secretNames(server: McpServerView): string[] {
  return Object.keys(server.transport === 'stdio' ? server.env : server.headers).sort();
}

/** The edit form as it opens: what is saved, the secrets kept. */
export function startEdit(server: McpServerView): McpServerForm {
  return {
    name: server.name,
    transport: server.transport,
    command: server.command ?? '',
    args: server.args.join('\n'),
    url: server.url ?? '',
    secrets: { mode: 'keep', names: secretNames(server) },
    callTimeout: String(server.callTimeout),
    clientId: server.oauthClientId ?? '',
    clientSecret: '',
    clientSecretSet: server.oauthClientSecret === 'set',
  };
}

/** Replacing the saved values: the saved names, each to be written again. */
export function replaceSecrets(names: readonly string[]): SecretsEdit {
  return { mode: 'replace', rows: names.map((name) => ({ name, value: '' })) };
}

/** The arguments, one a line; blank lines are dropped. */
export function parseArgs(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line.trim() !== '');
}

/** What the word for a secret is on this transport. */
export function secretKind(transport: McpTransport): { one: string; many: string } {
  return transport === 'stdio' ? { one: 'environment variable', many: 'Environment' } : { one: 'header', many: 'Headers' };
}

type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

function checkSecrets(transport: McpTransport, rows: readonly SecretRow[]): Checked<Record<string, string>> {
  const kind = secretKind(transport).one;
  const pattern = transport === 'stdio' ? ENV_NAME : HEADER_NAME;
  const values: Record<string, string> = {};
  for (const row of rows) {
    const name = row.name.trim();
    if (!name && !row.value) continue;
    if (!name) return { ok: false, reason: `Give the ${kind} with a value a name.` };
    if (!pattern.test(name)) {
      return { ok: false, reason: transport === 'stdio' ? `${name} is not a variable name: use letters, digits and _.` : `${name} is not a header name.` };
    }
    if (name in values) return { ok: false, reason: `${name} is written twice.` };
    if (!row.value) return { ok: false, reason: `Write the value of ${name}, or remove it.` };
    values[name] = row.value;
  }
  return { ok: true, value: values };
}

function checkTimeout(text: string): Checked<number> {
  const seconds = Number(text.trim());
  if (!text.trim() || !Number.isFinite(seconds) || seconds < 1 || seconds > 3600) {
    return { ok: false, reason: 'A call’s time limit is 1 to 3600 seconds.' };
  }
  return { ok: true, value: seconds };
}

function checkReach(form: McpServerForm): Checked<{ command: string | null; args: string[]; url: string | null }> {
  if (form.transport === 'stdio') {
    const command = form.command.trim();
    if (!command) return { ok: false, reason: 'Write the command that starts the server.' };
    return { ok: true, value: { command, args: parseArgs(form.args), url: null } };
  }
  const url = form.url.trim();
  if (!/^https?:\/\/\S+$/i.test(url)) return { ok: false, reason: 'Write the server’s address, starting with https:// (or http://).' };
  return { ok: true, value: { command: null, args: [], url } };
}

const CLIENT_ID = /^[\x21-\x7e]{1,255}$/;

/** The OAuth client's fields: the id trimmed, or why it cannot be sent. */
function checkClient(form: McpServerForm): Checked<string> {
  const id = form.clientId.trim();
  if (id && !CLIENT_ID.test(id)) return { ok: false, reason: 'A client ID is up to 255 visible characters, without spaces.' };
  if (!id && form.clientSecret) return { ok: false, reason: 'Write the client ID the secret goes with.' };
  return { ok: true, value: id };
}

function checkName(name: string): string | null {
  return NAME_PATTERN.test(name) ? null : 'A name is 1 to 32 lower-case letters, digits and dashes, starting and ending with a letter or digit.';
}

/** The body of `mcp-servers-v1/add`, or why the form cannot be sent. */
export function addBody(form: McpServerForm): FormOutcome<AddMcpServerArgs> {
  const name = form.name.trim();
  const badName = checkName(name);
  if (badName) return { kind: 'refused', reason: badName };
  const reach = checkReach(form);
  if (!reach.ok) return { kind: 'refused', reason: reach.reason };
  const timeout = checkTimeout(form.callTimeout);
  if (!timeout.ok) return { kind: 'refused', reason: timeout.reason };
  const rows = form.secrets.mode === 'replace' ? form.secrets.rows : [];
  const secrets = checkSecrets(form.transport, rows);
  if (!secrets.ok) return { kind: 'refused', reason: secrets.reason };
  const body: AddMcpServerArgs = { name, transport: form.transport, callTimeout: timeout.value };
  if (form.transport === 'stdio') {
    body.command = reach.value.command;
    body.args = reach.value.args;
    body.env = secrets.value;
  } else {
    const client = checkClient(form);
    if (!client.ok) return { kind: 'refused', reason: client.reason };
    body.url = reach.value.url;
    body.headers = secrets.value;
    if (client.value) body.oauthClientId = client.value;
    if (client.value && form.clientSecret) body.oauthClientSecret = form.clientSecret;
  }
  return { kind: 'send', body };
}

/**
 * The body of `mcp-servers-v1/update`: only what changed. A change of how it is reached
 * sends the transport with its command and arguments, or its address; new secrets go
 * whole, as environment or headers after the transport.
 */
export function updateBody(server: McpServerView, form: McpServerForm): FormOutcome<UpdateMcpServerArgs> {
  const body: UpdateMcpServerArgs = { id: server.id };
  const name = form.name.trim();
  if (name !== server.name) {
    const badName = checkName(name);
    if (badName) return { kind: 'refused', reason: badName };
    body.name = name;
  }
  const reach = checkReach(form);
  if (!reach.ok) return { kind: 'refused', reason: reach.reason };
  const moved =
    form.transport !== server.transport ||
    reach.value.command !== server.command ||
    reach.value.url !== server.url ||
    reach.value.args.join('\n') !== server.args.join('\n');
  if (moved) {
    body.transport = form.transport;
    if (form.transport === 'stdio') {
      body.command = reach.value.command;
      body.args = reach.value.args;
    } else body.url = reach.value.url;
  }
  if (form.transport !== server.transport && form.secrets.mode === 'keep' && form.secrets.names.length > 0) {
    return { kind: 'refused', reason: `A server reached another way needs its ${secretKind(form.transport).many.toLowerCase()} written anew, or none.` };
  }
  if (form.secrets.mode === 'replace') {
    const secrets = checkSecrets(form.transport, form.secrets.rows);
    if (!secrets.ok) return { kind: 'refused', reason: secrets.reason };
    if (form.transport === 'stdio') body.env = secrets.value;
    else body.headers = secrets.value;
  }
  if (form.transport === 'http') {
    // A changed client drops the server's sign-in; an emptied id clears the secret too.
    const client = checkClient(form);
    if (!client.ok) return { kind: 'refused', reason: client.reason };
    if (client.value !== (server.oauthClientId ?? '')) body.oauthClientId = client.value;
    if (client.value && form.clientSecret) body.oauthClientSecret = form.clientSecret;
    else if (client.value && !form.clientSecretSet && server.oauthClientSecret === 'set') body.oauthClientSecret = '';
  }
  const timeout = checkTimeout(form.callTimeout);
  if (!timeout.ok) return { kind: 'refused', reason: timeout.reason };
  if (timeout.value !== server.callTimeout) body.callTimeout = timeout.value;
  return Object.keys(body).length > 1 ? { kind: 'send', body } : { kind: 'nothing' };
}

export type StatusTone = 'ok' | 'warn' | 'error' | 'muted';

/** A server's status in words, with the tone of its mark; a disabled server is Off. */
export function statusText(enabled: boolean, status: McpStatusView): { text: string; tone: StatusTone; key: string } {
  if (!enabled) return { text: 'Off', tone: 'muted', key: 'disabled' };
  switch (status.status) {
    case 'connected':
      return { text: `Connected · ${status.tools} tool${status.tools === 1 ? '' : 's'}`, tone: 'ok', key: 'connected' };
    case 'starting':
      return { text: 'Starting…', tone: 'muted', key: 'starting' };
    case 'signIn': {
      // A cause with a code reads as its sentence.
      const why = (status.code ? ERROR_MESSAGES.get(status.code) : undefined) ?? status.reason;
      return { text: why ? `Needs sign-in: ${why}` : 'Needs sign-in', tone: 'warn', key: 'signIn' };
    }
    case 'error': {
      const why = (status.code ? ERROR_MESSAGES.get(status.code) : undefined) ?? status.reason;
      return { text: `Error: ${why ?? 'the server did not answer'}`, tone: 'error', key: 'error' };
    }
    default:
      return { text: 'Not running: it starts when an agent needs it', tone: 'muted', key: 'idle' };
  }
}

/** A status as the server list holds it, from an `mcp-server-status` event. */
export function statusFromEvent(event: McpStatusEvent): McpStatusView {
  return { status: event.status, reason: event.reason ?? null, tools: event.tools ?? 0, problems: event.problems ?? [], code: event.code ?? null };
}

/** The list with the statuses events told since it loaded. */
export function withLiveStatus(servers: readonly McpServerView[], live: ReadonlyMap<string, McpStatusView>): McpServerView[] {
  return servers.map((server) => {
    const status = live.get(server.id);
    return status ? { ...server, status } : server;
  });
}

/** The outcome of Test connection, in words. */
export function testOutcome(result: { tools: readonly McpToolView[]; status: McpStatusView }): { text: string; ok: boolean } {
  const { status, tools } = result;
  if (status.status === 'connected') {
    const skipped = status.problems.length ? `; ${status.problems.length} not offered (see below)` : '';
    return { text: `Connected: ${tools.length} tool${tools.length === 1 ? '' : 's'} offered${skipped}.`, ok: true };
  }
  if (status.status === 'signIn') return { text: 'The server wants a sign-in before it answers.', ok: false };
  return { text: `Could not connect: ${status.reason ?? 'the server did not answer'}.`.replace(/\.\.$/, '.'), ok: false };
}

/** A hint as the tool list shows it (what the server says, never trusted for asking). */
export function hintText(hint: string): string {
  return hint.charAt(0).toUpperCase() + hint.slice(1);
}

/** A problem line (`tool: reason`) split for the list. */
export function problemParts(problem: string): { tool: string; reason: string } {
  const at = problem.indexOf(': ');
  return at > 0 ? { tool: problem.slice(0, at), reason: problem.slice(at + 2) } : { tool: '', reason: problem };
}

/** What an agent has of a server: whether it is on and the tools it runs without asking. */
export function agentAccess(server: McpServerView, agentId: string): { enabled: boolean; unaskedTools: string[] } {
  const found = server.agents.find((a) => a.agentId === agentId);
  return found ? { enabled: true, unaskedTools: [...found.unaskedTools] } : { enabled: false, unaskedTools: [] };
}

/** The body that turns a server on or off for an agent, keeping its tools' switches. */
export function agentSwitch(server: McpServerView, agentId: string, enabled: boolean): SetAgentArgs {
  return { id: server.id, agentId, enabled, unaskedTools: enabled ? agentAccess(server, agentId).unaskedTools : [] };
}

/** The body that lets an agent run one tool without asking, or makes it ask again. */
export function toolSwitch(server: McpServerView, agentId: string, tool: string, unasked: boolean): SetAgentArgs {
  const now = agentAccess(server, agentId).unaskedTools.filter((t) => t !== tool);
  return { id: server.id, agentId, enabled: true, unaskedTools: unasked ? [...now, tool].sort() : now };
}
