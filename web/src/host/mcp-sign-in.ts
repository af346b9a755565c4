/**
 * Signing in to an MCP server that asks for it (`mcp-sign-in-v1`, owners and admins): the
 * host opens the server's authorization page in a private tab; the admin finishes it in
 * the live view; an `mcp-server-status` event of the server tells the end.
 */

import { ERROR_MESSAGES } from '../errors/messages';
import type { HostConnection } from './connection';
import type { TeamApiEvent } from './protocol';

export const MCP_SIGN_IN_CAPABILITY = 'mcp-sign-in-v1';

export interface McpSignInStartArgs {
  serverId: string;
}

export interface McpSignInStarted {
  signInId: string;
  tabId: string;
}

export interface McpSignInCancelArgs {
  signInId: string;
}

type LooseCall = (route: string, args: unknown) => Promise<unknown>;

function loose(connection: HostConnection): LooseCall {
  return connection.call.bind(connection) as unknown as LooseCall;
}

function isStarted(value: unknown): value is McpSignInStarted {
  const answer = value as Partial<McpSignInStarted> | null;
  return typeof answer?.signInId === 'string' && typeof answer.tabId === 'string';
}

export async function startMcpSignIn(connection: HostConnection, args: McpSignInStartArgs): Promise<McpSignInStarted> {
  const answer = await loose(connection)('mcp-sign-in-v1/start', args);
  if (!isStarted(answer)) throw new Error('mcp-sign-in-v1/start answered without a sign-in and a tab');
  return { signInId: answer.signInId, tabId: answer.tabId };
}

export async function cancelMcpSignIn(connection: HostConnection, args: McpSignInCancelArgs): Promise<void> {
  await loose(connection)('mcp-sign-in-v1/cancel', args);
}

export type McpSignInEnd = { kind: 'signedIn' } | { kind: 'failed'; reason: string };

/**
 * What an event says of a sign-in to ``serverId`` under way: `signedIn` once the server is
 * connected, `failed` (with the reason) once it is in error or asks for a sign-in again
 * with a reason (the sentence of its code, where it has one); null for anything else.
 */
export function signInEnd(event: TeamApiEvent, serverId: string): McpSignInEnd | null {
  if (event.event !== 'mcp-server-status') return null;
  const data = event.data as { serverId?: unknown; status?: unknown; reason?: unknown; code?: unknown } | null;
  if (data?.serverId !== serverId) return null;
  const said = typeof data.code === 'string' ? ERROR_MESSAGES.get(data.code) : undefined;
  const reason = said ?? (typeof data.reason === 'string' && data.reason ? data.reason : null);
  if (data.status === 'connected') return { kind: 'signedIn' };
  if (data.status === 'error') return { kind: 'failed', reason: reason ?? 'the server refused the sign-in' };
  if (data.status === 'signIn' && reason) return { kind: 'failed', reason };
  return null;
}
