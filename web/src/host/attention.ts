/**
 * Requests from agents that wait for a person: consent for a gated call, `ask_user`
 * questions, a secret for a page and a new vault item. The list loads from `attention-v1/list` and follows `attention-requested`;
 * `attention-resolved` removes a request wherever it is shown, whoever answered it.
 */

import { EVENT, type RouteArgs, type RouteResult, type TeamApiEvent } from './protocol';

export type AttentionRequest = RouteResult<'attention-v1/list'>['requests'][number];

/** The requests after one event: a new one is added once, an answered one goes. */
export function attentionAfterEvent(requests: AttentionRequest[], event: TeamApiEvent): AttentionRequest[] {
  const data = (typeof event.data === 'object' && event.data !== null ? event.data : {}) as Record<string, unknown>;
  if (typeof data.id !== 'string') return requests;
  if (event.event === EVENT.attentionResolved) {
    return requests.some((request) => request.id === data.id) ? requests.filter((request) => request.id !== data.id) : requests;
  }
  if (event.event !== EVENT.attentionRequested) return requests;
  if (requests.some((request) => request.id === data.id)) return requests;
  const request: AttentionRequest = {
    id: data.id,
    kind: String(data.kind ?? 'consent'),
    threadId: String(data.threadId ?? ''),
    agentId: String(data.agentId ?? ''),
    callId: String(data.callId ?? ''),
    tool: String(data.tool ?? ''),
    summary: String(data.summary ?? ''),
    // The event does not carry the hash; an answer without it approves the request as listed.
    argumentsHash: '',
    expiresAt: Number(data.expiresAt ?? 0),
    question: typeof data.question === 'string' ? data.question : null,
    options: Array.isArray(data.options) ? data.options.map(String) : null,
    multiple: data.multiple === true,
    // A request for a secret or a vault item carries its public facts as the host sent them.
    secret: typeof data.secret === 'object' && data.secret !== null ? (data.secret as AttentionRequest['secret']) : null,
    vaultItem: typeof data.vaultItem === 'object' && data.vaultItem !== null ? (data.vaultItem as AttentionRequest['vaultItem']) : null,
    // What the call will do, in the host's words (the raw call stays in `summary`).
    description: typeof data.description === 'string' ? data.description : null,
  };
  return [...requests, request];
}

/** A consent answer: only the call that was shown, when its hash is known. */
export function consentAnswer(request: AttentionRequest, approve: boolean): RouteArgs<'attention-v1/answer'> {
  return request.argumentsHash ? { id: request.id, approve, argumentsHash: request.argumentsHash } : { id: request.id, approve };
}

/** What a question card lets the person answer with. */
export type QuestionForm = { kind: 'text' } | { kind: 'single'; options: string[] } | { kind: 'multiple'; options: string[] };

export function questionForm(request: AttentionRequest): QuestionForm {
  const options = request.options ?? [];
  if (options.length === 0) return { kind: 'text' };
  return request.multiple ? { kind: 'multiple', options } : { kind: 'single', options };
}

/** The reply to send for what the person chose or wrote, or null while nothing is chosen. */
export function questionReply(request: AttentionRequest, chosen: readonly string[], text: string): RouteArgs<'attention-v1/reply'> | null {
  const form = questionForm(request);
  if (form.kind === 'text') return text.trim() ? { id: request.id, answer: text.trim() } : null;
  const picked = form.options.filter((option) => chosen.includes(option));
  if (picked.length === 0) return null;
  return form.kind === 'multiple' ? { id: request.id, answer: picked } : { id: request.id, answer: picked[0] };
}

/** The choices after the person toggles one: a single choice replaces, a multiple one toggles. */
export function toggleChoice(request: AttentionRequest, chosen: readonly string[], option: string): string[] {
  if (!request.multiple) return [option];
  return chosen.includes(option) ? chosen.filter((o) => o !== option) : [...chosen, option];
}

/** What "always allow this for this agent" needs: the agent and the families of gated tools. */
export interface AlwaysAllowContext {
  permissions: Readonly<Record<string, string>>;
  familyOfTool: Readonly<Record<string, string>>;
}

/**
 * The agent's permissions with the request's tool family auto-approved, or null when the
 * request is not a consent for a gated tool the host names a family for.
 */
export function alwaysAllowPermissions(request: AttentionRequest, context: AlwaysAllowContext): Record<string, 'ask' | 'auto-approve'> | null {
  const family = request.kind === 'consent' ? context.familyOfTool[request.tool] : undefined;
  if (!family) return null;
  const permissions: Record<string, 'ask' | 'auto-approve'> = {};
  for (const [name, value] of Object.entries(context.permissions)) permissions[name] = value === 'auto-approve' ? 'auto-approve' : 'ask';
  permissions[family] = 'auto-approve';
  return permissions;
}
