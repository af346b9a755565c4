/**
 * Personal access tokens as values: the create form's body, a token's state in words,
 * the audit list's outcome words, and the configuration snippets that give an MCP client
 * this hub's endpoint with a new token's secret.
 */

import type { AccessTokenUseView, AccessTokenView, CreateAccessToken } from './api/types';

export type Scope = NonNullable<CreateAccessToken['scope']>;

export const SCOPES: readonly { id: Scope; name: string; detail: string }[] = [
  { id: 'browser', name: 'Browser tools', detail: 'open, snapshot, click, type and the other browser tools' },
  { id: 'browser+agents', name: 'Browser tools and agents', detail: 'the browser tools, and ask_agent to send a team agent a message' },
];

export const EXPIRIES: readonly number[] = [7, 30, 90, 365];

export interface TokenForm {
  name: string;
  hostId: string;
  scope: Scope;
  expiresInDays: number;
}

export type TokenFormOutcome = { kind: 'send'; body: CreateAccessToken } | { kind: 'refused'; reason: string };

/** The body of `POST …/access-tokens`, or why the form cannot be sent. */
export function createBody(form: TokenForm): TokenFormOutcome {
  const name = form.name.trim();
  if (!name) return { kind: 'refused', reason: 'Name the token after what will use it.' };
  if (name.length > 100) return { kind: 'refused', reason: 'Use at most 100 characters for the name.' };
  if (!form.hostId) return { kind: 'refused', reason: 'Choose the host whose browsers it uses.' };
  if (!Number.isInteger(form.expiresInDays) || form.expiresInDays < 1 || form.expiresInDays > 365) {
    return { kind: 'refused', reason: 'A token lasts 1 to 365 days.' };
  }
  return { kind: 'send', body: { name, hostId: form.hostId, scope: form.scope, expiresInDays: form.expiresInDays } };
}

export function scopeName(scope: string): string {
  return SCOPES.find((s) => s.id === scope)?.name ?? scope;
}

/** A token's state: live, revoked or expired. */
export function tokenState(token: AccessTokenView): { text: string; key: 'live' | 'revoked' | 'expired' } {
  if (token.revoked) return { text: 'Revoked', key: 'revoked' };
  if (!token.live) return { text: 'Expired', key: 'expired' };
  return { text: 'Live', key: 'live' };
}

/** An audit line's outcome in words. */
export function outcomeText(use: AccessTokenUseView): string {
  if (use.outcome === 'ok') return 'Done';
  if (use.outcome === 'error') return 'The tool answered an error';
  if (use.outcome === 'refused') return 'Refused (denied or not answered)';
  return use.outcome;
}

/** The hub's MCP endpoint as a client outside this browser dials it. */
export function endpointUrl(origin: string): string {
  return `${origin.replace(/\/+$/, '')}/v1/mcp`;
}

export type SnippetClient = 'claude' | 'cursor' | 'vscode';

export interface Snippet {
  client: SnippetClient;
  title: string;
  /** Where it goes: a terminal, or the file it is written into. */
  where: string;
  text: string;
}

/** The server's name in each client's configuration. */
export const SERVER_NAME = 'crewhost';

function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** How Claude Code, Cursor and VS Code reach this hub with ``secret``. */
export function snippets(url: string, secret: string): Snippet[] {
  const authorization = `Bearer ${secret}`;
  return [
    {
      client: 'claude',
      title: 'Claude Code',
      where: 'Run in a terminal',
      text: `claude mcp add --transport http ${SERVER_NAME} ${url} --header "Authorization: ${authorization}"`,
    },
    {
      client: 'cursor',
      title: 'Cursor',
      where: '.cursor/mcp.json',
      text: json({ mcpServers: { [SERVER_NAME]: { url, headers: { Authorization: authorization } } } }),
    },
    {
      client: 'vscode',
      title: 'VS Code',
      where: '.vscode/mcp.json',
      text: json({ servers: { [SERVER_NAME]: { type: 'http', url, headers: { Authorization: authorization } } } }),
    },
  ];
}
