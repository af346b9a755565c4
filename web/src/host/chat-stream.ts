/**
 * One thread's conversation as the chat shows it, built from `threads-v1/get` and then
 * kept current by the host's events (text deltas, tool calls, turn status, tasks and
 * sub-agents). A reply that broke off and is asked for again (`turn-text-reset`) leaves
 * the conversation: the new reply's text takes its place. Everything here lives in memory only: chat content never goes to storage.
 *
 * A member's message is shown at once as `sending`; when the host refuses it, it stays
 * `failed` until the person presses Retry. A message sent while a turn runs waits in the
 * thread's queue (`queued`) until a turn takes it: then it joins the conversation. Nothing
 * here sends anything on its own.
 */

import { EVENT, type EventData, type RouteResult, type TeamApiEvent } from './protocol';

export type ThreadContents = RouteResult<'threads-v1/get'>;
export type TaskItem = EventData<'tasks-changed'>['tasks'][number];
/** A message waiting behind the running turn; its sender may edit, steer or cancel it. */
export type QueuedItem = EventData<'queued-message-added'>['queued'];
export type TurnStatus = 'running' | EventData<'turn-finished'>['status'];
/** How a tool call ended, as its card says it. */
export type ToolOutcome = 'running' | 'ok' | 'refused' | 'error' | 'notVerified' | 'mismatch';

/** A file that went with a member's message; `sha256` fetches its preview from the host. */
export interface SentAttachment {
  name: string;
  sha256: string | null;
  preview: boolean;
}

export interface UserItem {
  kind: 'user';
  key: string;
  text: string;
  attachments: SentAttachment[];
  delivery: 'sent' | 'sending' | 'failed';
  /** Who wrote it (an account id); null when the host did not say (see `writerOf`). */
  author: string | null;
  /** Why the host refused a failed send, in words for the person. */
  failure?: string;
  /** The send was refused because a budget is spent (owners and admins may open Budgets). */
  budget?: boolean;
}

export interface TextItem {
  kind: 'text';
  key: string;
  turnId: string | null;
  text: string;
}

export interface ToolItem {
  kind: 'tool';
  key: string;
  turnId: string | null;
  tool: string;
  /** What the call is about: its target, or its short arguments. */
  target: string;
  /** A gated call's one line from the host: what it does, on which page. */
  description: string | null;
  tabId: string | null;
  outcome: ToolOutcome;
  /** The reason of a refusal or an error, or what came back. */
  detail: string;
}

export type ChatItem = UserItem | TextItem | ToolItem;

export interface TurnState {
  id: string;
  status: TurnStatus;
  reason: string | null;
  /** An error's stable code from the host (`providerKeyMissing`, …), when it has one. */
  code: string | null;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
}

export interface SubAgentState {
  id: string;
  description: string;
  type: string;
  phase: string;
  status: string | null;
  lastText: string;
  lastTool: string | null;
}

export interface ChatState {
  threadId: string;
  items: ChatItem[];
  turns: TurnState[];
  runningTurnId: string | null;
  /** The running turn waits for one of the team's places (how many of the team's turns
   * wait before it); null when it runs. */
  waiting: number | null;
  /** The tab the agent last worked in (its most recent tool call that named one). */
  tabId: string | null;
  tasks: TaskItem[];
  subAgents: SubAgentState[];
  queued: QueuedItem[];
}

const MARKS: ReadonlyArray<[string, ToolOutcome]> = [
  ['MISMATCH', 'mismatch'],
  ['NOT VERIFIED', 'notVerified'],
];

function markOf(text: string): ToolOutcome | null {
  return MARKS.find(([mark]) => text.includes(mark))?.[1] ?? null;
}

/** A call's target from its arguments: the first address, selector or text it names. */
function targetOf(args: unknown): string {
  if (typeof args !== 'object' || args === null) return '';
  const record = args as Record<string, unknown>;
  for (const name of ['url', 'selector', 'query', 'path', 'text', 'description']) {
    if (typeof record[name] === 'string') return (record[name] as string).slice(0, 200);
  }
  return '';
}

/** The tab a tool's result names, if it is a JSON object with a `tabId`. */
function tabOfResult(content: string): string | null {
  if (!content.startsWith('{')) return null;
  try {
    const tabId = asRecord(JSON.parse(content)).tabId;
    return typeof tabId === 'string' ? tabId : null;
  } catch {
    return null;
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

/**
 * What the host stores for the model where a person reads other words, mapped to the words
 * its live event said (`tool-call-finished`'s summary). The model's sentence mirrors
 * `DENIED` in `server/host/agents/turn_loop.py`; a test checks the two agree.
 */
export const DENIED_FOR_MODEL = 'The person denied this call. Nothing was done. Do not try it another way.';
export const DENIED_FOR_PEOPLE = 'denied by a member';
const PERSON_WORDS: ReadonlyMap<string, string> = new Map([[DENIED_FOR_MODEL, DENIED_FOR_PEOPLE]]);

/**
 * A stored result's outcome and detail, as the host's `tool-call-finished` would have said
 * them: a refusal `{"error": {"code", "message"}}` becomes `<code>: <message>`, so a
 * reloaded card reads the same sentence (through `toolDetail`) as the live one did.
 */
export function storedOutcome(content: string, isError: boolean): { outcome: ToolOutcome; detail: string } {
  let error: Record<string, unknown> | null = null;
  if (content.startsWith('{')) {
    try {
      const parsed = asRecord(asRecord(JSON.parse(content)).error);
      if (typeof parsed.code === 'string') error = parsed;
    } catch {
      error = null;
    }
  }
  if (error) {
    const code = String(error.code);
    const detail = `${code}: ${String(error.message ?? '').slice(0, 200)}`;
    return { outcome: code === 'toolFailed' ? 'error' : 'refused', detail };
  }
  if (isError) return { outcome: 'refused', detail: PERSON_WORDS.get(content) ?? content.slice(0, 200) };
  const outcome = markOf(content) ?? 'ok';
  return { outcome, detail: outcome === 'ok' ? '' : content.slice(0, 200) };
}

/** The conversation as the host has kept it, with the running turn's text so far. */
export function chatFromContents(contents: ThreadContents): ChatState {
  const items: ChatItem[] = [];
  let tabId: string | null = null;
  contents.messages.forEach((raw, index) => {
    const message = asRecord(raw);
    if (message.role === 'user') {
      const attachments = (Array.isArray(message.attachments) ? message.attachments : []).map(asRecord).map((a) => ({
        name: String(a.name ?? ''),
        sha256: typeof a.sha256 === 'string' ? a.sha256 : null,
        preview: a.previewKind === 'image',
      }));
      const author = typeof message.accountId === 'string' ? message.accountId : null;
      items.push({ kind: 'user', key: `m${index}`, text: String(message.text ?? ''), attachments, delivery: 'sent', author });
    } else if (message.role === 'assistant') {
      if (message.text) items.push({ kind: 'text', key: `m${index}`, turnId: null, text: String(message.text) });
      const calls = Array.isArray(message.toolCalls) ? message.toolCalls : [];
      for (const call of calls.map(asRecord)) {
        const args = asRecord(call.arguments);
        if (typeof args.tabId === 'string') tabId = args.tabId;
        items.push({ kind: 'tool', key: `c${String(call.id)}`, turnId: null, tool: String(call.name ?? ''), target: targetOf(args), description: null, tabId: typeof args.tabId === 'string' ? args.tabId : null, outcome: 'running', detail: '' });
      }
    } else if (message.role === 'tool') {
      const content = String(message.content ?? '');
      // A tab the agent opened is named by the call's result (`open` takes no tab).
      tabId = tabOfResult(content) ?? tabId;
      const key = `c${String(message.callId)}`;
      const { outcome, detail } = storedOutcome(content, message.isError === true);
      const at = items.findIndex((item) => item.key === key);
      const description = typeof message.description === 'string' ? message.description : null;
      if (at >= 0) items[at] = { ...(items[at] as ToolItem), outcome, detail, description };
    }
  });
  const turns = contents.turns.map((turn) => ({
    id: turn.id,
    status: turn.status as TurnStatus,
    reason: turn.reason,
    code: turn.code ?? null,
    toolCalls: turn.toolCalls,
    inputTokens: turn.inputTokens,
    outputTokens: turn.outputTokens,
  }));
  const running = contents.runningTurnId;
  if (running && contents.runningText) items.push({ kind: 'text', key: `t${running}`, turnId: running, text: contents.runningText });
  return { threadId: contents.thread.id, items, turns, runningTurnId: running, waiting: running && contents.runningTurnWaiting ? 0 : null, tabId, tasks: contents.tasks, subAgents: [], queued: contents.queued ?? [] };
}

function withTurn(state: ChatState, turn: TurnState): TurnState[] {
  return [...state.turns.filter((old) => old.id !== turn.id), turn];
}

function replaceItem(items: ChatItem[], key: string, change: (item: ChatItem) => ChatItem): ChatItem[] {
  return items.map((item) => (item.key === key ? change(item) : item));
}

/**
 * The conversation after one host event; events of other threads leave it as it was. `me`:
 * the viewer's account id; a turn started by their own message shows nothing new (their
 * chat showed it as they sent it), one started by another's shows that message.
 */
export function chatAfterEvent(state: ChatState, event: TeamApiEvent, me: string | null = null): ChatState {
  const data = asRecord(event.data);
  if (data.threadId !== state.threadId) return state;
  const turnId = typeof data.turnId === 'string' ? data.turnId : null;
  switch (event.event) {
    case EVENT.turnStarted: {
      if (!turnId) return state;
      const turn: TurnState = { id: turnId, status: 'running', reason: null, code: null, toolCalls: 0, inputTokens: 0, outputTokens: 0 };
      const started = { ...state, runningTurnId: turnId, waiting: null, turns: withTurn(state, turn) };
      const sent = data.userMessage ? asRecord(data.userMessage) : null;
      const author = sent && typeof sent.accountId === 'string' ? sent.accountId : null;
      const key = `s${turnId}`;
      if (!sent || (author !== null && author === me) || state.items.some((item) => item.key === key)) return started;
      const attachments = (Array.isArray(sent.attachments) ? sent.attachments : []).map((name) => ({ name: String(name), sha256: null, preview: false }));
      const item: UserItem = { kind: 'user', key, text: String(sent.text ?? ''), attachments, delivery: 'sent', author };
      return { ...started, items: [...started.items, item] };
    }
    case EVENT.turnWaiting:
      return turnId === state.runningTurnId ? { ...state, waiting: Number(data.ahead ?? 0) } : state;
    case EVENT.turnRunning:
      return turnId === state.runningTurnId ? { ...state, waiting: null } : state;
    case EVENT.turnText: {
      const text = typeof data.text === 'string' ? data.text : '';
      const last = state.items[state.items.length - 1];
      // Text continues the turn's last text item; after a tool call it starts a new one.
      if (last?.kind === 'text' && last.turnId === turnId) {
        return { ...state, items: [...state.items.slice(0, -1), { ...last, text: last.text + text }] };
      }
      return { ...state, items: [...state.items, { kind: 'text', key: `t${turnId}.${state.items.length}`, turnId, text }] };
    }
    case EVENT.turnTextReset: {
      // The reply being streamed broke off and is asked for again: what it said so far is
      // the turn's last text item (a reply's text comes before its tool calls).
      const last = state.items[state.items.length - 1];
      if (last?.kind !== 'text' || last.turnId !== turnId) return state;
      return { ...state, items: state.items.slice(0, -1) };
    }
    case EVENT.toolCallStarted: {
      const key = `c${String(data.callId)}`;
      if (state.items.some((item) => item.key === key)) return state;
      const tabId = typeof data.tabId === 'string' ? data.tabId : null;
      const description = typeof data.description === 'string' ? data.description : null;
      const item: ToolItem = { kind: 'tool', key, turnId, tool: String(data.tool ?? ''), target: String(data.summary ?? ''), description, tabId, outcome: 'running', detail: '' };
      return { ...state, items: [...state.items, item], tabId: tabId ?? state.tabId };
    }
    case EVENT.toolCallFinished: {
      const summary = String(data.summary ?? '');
      const base = data.outcome === 'refused' || data.outcome === 'error' ? (data.outcome as ToolOutcome) : 'ok';
      const outcome = base === 'ok' ? (markOf(summary) ?? 'ok') : base;
      const detail = outcome === 'ok' ? '' : summary;
      const key = `c${String(data.callId)}`;
      const description = typeof data.description === 'string' ? data.description : null;
      // The tab the call worked in or opened (an `open`'s new tab): Watch live at once.
      const tabId = typeof data.tabId === 'string' ? data.tabId : null;
      if (!state.items.some((item) => item.key === key)) {
        // A call refused before it ran (a denial, a tool not offered) never started.
        const item: ToolItem = { kind: 'tool', key, turnId, tool: String(data.tool ?? ''), target: '', description, tabId, outcome, detail };
        return { ...state, items: [...state.items, item], tabId: tabId ?? state.tabId };
      }
      const finish = (item: ToolItem): ToolItem => ({ ...item, outcome, detail, description: description ?? item.description, tabId: tabId ?? item.tabId });
      return { ...state, items: replaceItem(state.items, key, (item) => finish(item as ToolItem)), tabId: tabId ?? state.tabId };
    }
    case EVENT.turnFinished: {
      if (!turnId) return state;
      const turn: TurnState = {
        id: turnId,
        status: String(data.status) as TurnStatus,
        reason: typeof data.reason === 'string' ? data.reason : null,
        code: typeof data.code === 'string' ? data.code : null,
        toolCalls: Number(data.toolCalls ?? 0),
        inputTokens: Number(data.inputTokens ?? 0),
        outputTokens: Number(data.outputTokens ?? 0),
      };
      // A call still running when the turn ended never finished.
      const items = state.items.map((item) => (item.kind === 'tool' && item.turnId === turnId && item.outcome === 'running' ? { ...item, outcome: 'error' as const, detail: 'The turn ended first.' } : item));
      return { ...state, items, turns: withTurn(state, turn), runningTurnId: state.runningTurnId === turnId ? null : state.runningTurnId, waiting: state.runningTurnId === turnId ? null : state.waiting };
    }
    case EVENT.queuedMessageAdded:
    case EVENT.queuedMessageUpdated: {
      const queued = data.queued as QueuedItem;
      const at = state.queued.findIndex((old) => old.id === queued.id);
      if (at < 0) return event.event === EVENT.queuedMessageAdded ? { ...state, queued: [...state.queued, queued] } : state;
      return { ...state, queued: state.queued.map((old) => (old.id === queued.id ? queued : old)) };
    }
    case EVENT.queuedMessageCancelled:
      return { ...state, queued: state.queued.filter((old) => old.id !== data.id) };
    case EVENT.queuedMessageTaken: {
      // Taken into a turn: from now on it is part of the conversation.
      const taken = state.queued.find((old) => old.id === data.id);
      const queued = state.queued.filter((old) => old.id !== data.id);
      if (!taken) return { ...state, queued };
      const attachments = taken.attachments.map((name) => ({ name, sha256: null, preview: false }));
      const item: UserItem = { kind: 'user', key: `q${taken.id}`, text: taken.text, attachments, delivery: 'sent', author: taken.accountId };
      return { ...state, queued, items: [...state.items, item] };
    }
    case EVENT.tasksChanged:
      return { ...state, tasks: Array.isArray(data.tasks) ? (data.tasks as TaskItem[]) : [] };
    case EVENT.subAgent: {
      const id = String(data.subAgentId ?? '');
      const old = state.subAgents.find((agent) => agent.id === id);
      const next: SubAgentState = {
        id,
        description: String(data.description ?? old?.description ?? ''),
        type: String(data.type ?? old?.type ?? 'general'),
        phase: String(data.phase ?? ''),
        status: typeof data.status === 'string' ? data.status : (old?.status ?? null),
        lastText: data.phase === 'text' ? (old?.lastText ?? '') + String(data.text ?? '') : (old?.lastText ?? ''),
        lastTool: typeof data.tool === 'string' ? data.tool : (old?.lastTool ?? null),
      };
      return { ...state, subAgents: [...state.subAgents.filter((agent) => agent.id !== id), next] };
    }
    default:
      return state;
  }
}

/** A message the person (`author`, their account id) just sent, shown before the host answers. */
export function chatWithSending(state: ChatState, key: string, text: string, attachments: SentAttachment[], author: string): ChatState {
  return { ...state, items: [...state.items, { kind: 'user', key, text, attachments, delivery: 'sending', author }] };
}

/**
 * Who wrote a member's message, as the chat names them: the host says for each message
 * (stored, started or taken from the queue); one stored before the host kept writers, or
 * written by no person, is the thread's starter's: in a private thread the only writer.
 */
export function writerOf(item: UserItem, thread: { createdBy: string } | null, meId: string): string {
  return item.author ?? thread?.createdBy ?? meId;
}

/** The host took the message (`sent`) or refused it (`failed`, with the reason; `budget`
 * when a spent budget refused it). */
export function chatWithDelivery(state: ChatState, key: string, failure: string | null, budget = false): ChatState {
  return {
    ...state,
    items: replaceItem(state.items, key, (item) =>
      item.kind === 'user'
        ? failure === null
          ? { ...item, delivery: 'sent', failure: undefined, budget: undefined }
          : { ...item, delivery: 'failed', failure, budget: budget || undefined }
        : item,
    ),
  };
}

/** The host queued the message behind the running turn: it shows in the queue, not yet in
 * the conversation. */
export function chatWithQueued(state: ChatState, key: string): ChatState {
  return { ...state, items: state.items.filter((item) => item.key !== key) };
}

/** The failed message the person asked to send again, marked sending; null when there is none. */
export function chatRetrying(state: ChatState, key: string): { state: ChatState; item: UserItem } | null {
  const item = state.items.find((old): old is UserItem => old.key === key && old.kind === 'user' && old.delivery === 'failed');
  if (!item) return null;
  const sending: UserItem = { ...item, delivery: 'sending', failure: undefined, budget: undefined };
  return { state: { ...state, items: replaceItem(state.items, key, () => sending) }, item: sending };
}

/** Tokens the thread's turns have used, in and out. */
export function tokenUsage(state: ChatState): { input: number; output: number } {
  return state.turns.reduce((sum, turn) => ({ input: sum.input + turn.inputTokens, output: sum.output + turn.outputTokens }), { input: 0, output: 0 });
}

/** Tasks done of all, for the progress line. */
export function taskProgress(tasks: readonly TaskItem[]): { done: number; total: number } {
  return { done: tasks.filter((task) => task.status === 'completed').length, total: tasks.length };
}

/** Words for a finished turn's status. */
export function turnStatusText(turn: TurnState): string {
  const words: Record<TurnStatus, string> = {
    running: 'Working…',
    done: 'Done',
    denied: 'Stopped: a request was denied',
    capped: 'Stopped: the tool call limit was reached',
    incomplete: 'Incomplete',
    stopped: 'Stopped',
    error: 'Failed',
    interrupted: 'Interrupted',
    budget: 'Stopped: a budget is spent',
  };
  const text = words[turn.status] ?? turn.status;
  return turn.reason && turn.status !== 'done' ? `${text} — ${turn.reason}` : text;
}

/** Whether a turn failed because its provider has no API key (the host's words for it). */
export function needsProviderKey(turn: TurnState): boolean {
  return turn.status === 'error' && turn.code !== null && PROVIDER_KEY_CODES.has(turn.code);
}

/** Whether a turn ended because a budget of the team is spent. */
export function stoppedByBudget(turn: TurnState): boolean {
  return turn.status === 'budget' || turn.code === 'budgetExceeded';
}

/**
 * The host's sentence for a send refused because a budget is spent (it names the budget
 * and who can raise it), or null for any other failure. Without the host's sentence, the
 * client's own words for `budgetExceeded` stand in.
 */
export function budgetRefusal(failure: unknown, fallback: string): string | null {
  if (typeof failure !== 'object' || failure === null) return null;
  const { code, message } = failure as { code?: unknown; message?: unknown };
  if (code !== 'budgetExceeded') return null;
  const said = typeof message === 'string' ? message.trim() : '';
  return said.includes('“') ? said : fallback;
}

/** The host's codes of a turn that ended for want of a key the Providers tab sets. */
const PROVIDER_KEY_CODES: ReadonlySet<string> = new Set(['providerKeyMissing', 'providerKeyRefused', 'providerKeyUnusable']);

/**
 * A refused or failed call's detail in words for a person: the host writes
 * `<code>: <reason>`; the card shows the reason as a sentence and keeps the code apart.
 */
export function toolDetail(detail: string): { code: string | null; text: string } {
  const match = /^([a-z][A-Za-z0-9]{1,63}): (.+)$/s.exec(detail);
  if (!match) return { code: null, text: detail };
  const reason = match[2]!.trim();
  return { code: match[1]!, text: reason.charAt(0).toUpperCase() + reason.slice(1) };
}

/** Why a turn has not begun: the team runs as many turns at once as the host allows. */
export function waitingText(ahead: number): string {
  const before = ahead === 1 ? ' One of its turns waits before this one.' : ahead > 1 ? ` ${ahead} of its turns wait before this one.` : '';
  return `Waiting: your team already runs as many turns at once as this host allows. This one starts when one of them ends.${before}`;
}
