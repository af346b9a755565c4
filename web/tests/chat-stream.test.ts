/** One thread's conversation: loaded from the host, then kept current by its events. */
import { describe, expect, it } from 'vitest';
import {
  DENIED_FOR_PEOPLE,
  chatAfterEvent,
  chatFromContents,
  chatRetrying,
  chatWithDelivery,
  chatWithQueued,
  chatWithSending,
  taskProgress,
  tokenUsage,
  toolDetail,
  needsProviderKey,
  budgetRefusal,
  stoppedByBudget,
  turnStatusText,
  waitingText,
  writerOf,
  type ChatState,
  type ThreadContents,
  type ToolItem,
} from '../src/host/chat-stream';
import type { TeamApiEvent } from '../src/host/protocol';

const THREAD = 'a'.repeat(32);
const OTHER = 'b'.repeat(32);

function contents(extra: Partial<ThreadContents> = {}): ThreadContents {
  return {
    thread: { id: THREAD, agentId: 'c'.repeat(32), createdBy: 'me', shared: false, title: 'Shop', createdAt: 1, updatedAt: 1, parentThreadId: null, parentAgentId: null },
    messages: [],
    turns: [],
    runningTurnId: null,
    runningText: '',
    runningTurnWaiting: false,
    tasks: [],
    queued: [],
    delegations: [],
    ...extra,
  };
}

function play(state: ChatState, events: TeamApiEvent[], me: string | null = null): ChatState {
  return events.reduce((soFar, event) => chatAfterEvent(soFar, event, me), state);
}

const ev = (event: string, data: Record<string, unknown>): TeamApiEvent => ({ event, data: { threadId: THREAD, turnId: 't1', ...data } });

describe('chat stream', () => {
  it('rebuilds a transcript with tool cards and their outcomes', () => {
    const state = chatFromContents(
      contents({
        messages: [
          { role: 'user', text: 'Buy it', attachments: [{ name: 'list.txt', sha256: 'e'.repeat(64), previewKind: 'none' }] },
          { role: 'assistant', text: 'Opening', toolCalls: [{ id: 'k1', name: 'open_tab', arguments: { url: 'https://a.example/' } }, { id: 'k2', name: 'click', arguments: { selector: '#buy', tabId: 'tab9' } }] },
          { role: 'tool', callId: 'k1', content: '{"tabId":"tab9"}' },
          { role: 'tool', callId: 'k2', content: 'NOT VERIFIED: the page showed no change' },
        ],
        turns: [{ id: 't0', status: 'done', reason: null, code: null, toolCalls: 2, inputTokens: 10, outputTokens: 5, startedAt: 1, endedAt: 2 }],
      }),
    );
    expect(state.items.map((item) => item.kind)).toEqual(['user', 'text', 'tool', 'tool']);
    expect(state.items[0]).toMatchObject({ attachments: [{ name: 'list.txt', sha256: 'e'.repeat(64), preview: false }] });
    const [open, click] = state.items.slice(2) as ToolItem[];
    expect(open).toMatchObject({ tool: 'open_tab', target: 'https://a.example/', outcome: 'ok' });
    expect(click).toMatchObject({ tool: 'click', target: '#buy', outcome: 'notVerified' });
    expect(state.tabId).toBe('tab9');
    expect(tokenUsage(state)).toEqual({ input: 10, output: 5 });
  });

  it('knows the tab an `open` named in its result, and joins a running turn where it is', () => {
    const running = chatFromContents(
      contents({
        messages: [
          { role: 'user', text: 'Sign in' },
          { role: 'assistant', text: '', toolCalls: [{ id: 'k1', name: 'open', arguments: { url: 'https://shop.example/' } }] },
          { role: 'tool', callId: 'k1', content: '{"tabId":"tab7","title":"Sign in"}' },
          { role: 'assistant', text: 'Asking you.', toolCalls: [{ id: 'k2', name: 'submit_secret', arguments: { tabId: 'tab7' } }] },
        ],
        runningTurnId: 't1',
        turns: [{ id: 't1', status: 'running', reason: null, code: null, toolCalls: 1, inputTokens: 0, outputTokens: 0, startedAt: 1, endedAt: null }],
      }),
    );
    expect(running.tabId).toBe('tab7');
    expect(running.items.map((item) => (item.kind === 'tool' ? `${item.tool}:${item.outcome}` : item.kind))).toEqual(['user', 'open:ok', 'text', 'submit_secret:running']);
    // The events of the waiting call finish the card the contents showed, once.
    const state = play(running, [
      ev('tool-call-started', { callId: 'k2', tool: 'submit_secret', summary: 'sign in', tabId: 'tab7' }),
      ev('tool-call-finished', { callId: 'k2', tool: 'submit_secret', outcome: 'ok', summary: 'entered' }),
    ]);
    expect(state.items.filter((item) => item.kind === 'tool').map((item) => (item as ToolItem).outcome)).toEqual(['ok', 'ok']);
    expect(chatFromContents(contents({ messages: [{ role: 'tool', callId: 'x', content: '{"tabId": 3}' }] })).tabId).toBeNull();
  });

  it('streams text, tool calls and the turn status; other threads change nothing', () => {
    let state = chatFromContents(contents());
    state = play(state, [
      ev('turn-started', {}),
      ev('turn-text', { text: 'Hel' }),
      ev('turn-text', { text: 'lo' }),
      ev('tool-call-started', { callId: 'k1', tool: 'click', summary: 'click #buy', tabId: 'tab1' }),
      ev('turn-text', { text: 'After' }),
      { event: 'turn-text', data: { threadId: OTHER, turnId: 'x', text: 'not mine' } },
    ]);
    expect(state.runningTurnId).toBe('t1');
    expect(state.items.map((item) => (item.kind === 'text' ? item.text : item.kind))).toEqual(['Hello', 'tool', 'After']);
    expect(state.tabId).toBe('tab1');
    state = play(state, [
      ev('tool-call-finished', { callId: 'k1', tool: 'click', outcome: 'refused', summary: 'consentDenied: a member said no' }),
      ev('turn-finished', { status: 'denied', reason: 'a member said no', toolCalls: 1, inputTokens: 7, outputTokens: 3 }),
    ]);
    expect(state.items[1]).toMatchObject({ outcome: 'refused', detail: 'consentDenied: a member said no' });
    expect(state.runningTurnId).toBeNull();
    expect(turnStatusText(state.turns[0])).toBe('Stopped: a request was denied — a member said no');
    expect(tokenUsage(state)).toEqual({ input: 7, output: 3 });
  });

  it("says a turn waits for one of the team's places, until it runs or ends", () => {
    let state = play(chatFromContents(contents()), [ev('turn-started', {}), ev('turn-waiting', { ahead: 2 })]);
    expect(state.waiting).toBe(2);
    state = play(state, [{ event: 'turn-running', data: { threadId: THREAD, turnId: 'other' } }]);
    expect(state.waiting).toBe(2);
    state = play(state, [ev('turn-running', {})]);
    expect(state.waiting).toBeNull();
    state = play(state, [ev('turn-waiting', { ahead: 0 }), ev('turn-finished', { status: 'stopped', reason: 'a member stopped the turn' })]);
    expect(state.waiting).toBeNull();
    expect(waitingText(1)).toContain('One of its turns waits before this one.');
    const loaded = chatFromContents(contents({ runningTurnId: 't1', runningTurnWaiting: true }));
    expect(loaded.waiting).toBe(0);
  });

  it('shows a call refused before it ran as a refused card', () => {
    const state = chatAfterEvent(chatFromContents(contents()), ev('tool-call-finished', { callId: 'k9', tool: 'click', outcome: 'refused', summary: 'denied by a member' }));
    expect(state.items).toEqual([{ kind: 'tool', key: 'ck9', turnId: 't1', tool: 'click', target: '', description: null, tabId: null, outcome: 'refused', detail: 'denied by a member' }]);
  });

  it("shows a gated call in the host's words and offers the tab an open opened at once", () => {
    const state = play(chatFromContents(contents()), [
      ev('turn-started', {}),
      ev('tool-call-started', { callId: 't1.1', tool: 'open', summary: '{"url": "https://shop.test/"}', tabId: null, description: 'Open https://shop.test/ in a new tab' }),
      ev('tool-call-finished', { callId: 't1.1', tool: 'open', outcome: 'ok', summary: 'ok', description: 'Open https://shop.test/ in a new tab', tabId: 'tab-9', tabTitle: 'Shop' }),
    ]);
    expect(state.items).toEqual([
      { kind: 'tool', key: 'ct1.1', turnId: 't1', tool: 'open', target: '{"url": "https://shop.test/"}', description: 'Open https://shop.test/ in a new tab', tabId: 'tab-9', outcome: 'ok', detail: '' },
    ]);
    expect(state.tabId).toBe('tab-9');
  });

  it("keeps one card per call of the host's own ids, whatever the provider named them", () => {
    const state = play(chatFromContents(contents()), [
      ev('turn-started', {}),
      ev('tool-call-started', { callId: 't1.1', tool: 'open', summary: '{}', tabId: null }),
      ev('tool-call-finished', { callId: 't1.1', tool: 'open', outcome: 'ok', summary: 'ok' }),
      ev('tool-call-started', { callId: 't1.2', tool: 'click', summary: '{}', tabId: 'x' }),
      ev('tool-call-finished', { callId: 't1.2', tool: 'click', outcome: 'refused', summary: 'gatedAction: Place order' }),
    ]);
    expect(state.items.map((item) => [item.key, (item as { outcome?: string }).outcome])).toEqual([
      ['ct1.1', 'ok'],
      ['ct1.2', 'refused'],
    ]);
  });

  it('marks MISMATCH, and a call cut off by the end of its turn', () => {
    const state = play(chatFromContents(contents()), [
      ev('turn-started', {}),
      ev('tool-call-started', { callId: 'k1', tool: 'type_text', summary: '#q', tabId: null }),
      ev('tool-call-finished', { callId: 'k1', tool: 'type_text', outcome: 'ok', summary: 'MISMATCH' }),
      ev('tool-call-started', { callId: 'k2', tool: 'click', summary: '#go', tabId: null }),
      ev('turn-finished', { status: 'stopped', reason: null, toolCalls: 2, inputTokens: 1, outputTokens: 1 }),
    ]);
    expect((state.items as ToolItem[]).map((item) => item.outcome)).toEqual(['mismatch', 'error']);
    expect(turnStatusText(state.turns[0])).toBe('Stopped');
  });

  it('drops the text of a reply that broke off, and keeps what came before its tool calls', () => {
    const state = play(chatFromContents(contents()), [
      ev('turn-started', {}),
      ev('turn-text', { text: 'Looking.' }),
      ev('tool-call-started', { callId: 'k1', tool: 'snapshot', summary: '{}', tabId: 'tab1' }),
      ev('tool-call-finished', { callId: 'k1', tool: 'snapshot', outcome: 'ok', summary: 'ok' }),
      ev('turn-text', { text: 'Part' }),
      ev('turn-text', { text: 'ial' }),
      ev('turn-text-reset', { reason: 'the connection to Anthropic broke in the middle of the reply' }),
      ev('turn-text', { text: 'Whole answer.' }),
      { event: 'turn-text-reset', data: { threadId: OTHER, turnId: 'x', reason: 'not mine' } },
    ]);
    expect(state.items.map((item) => (item.kind === 'text' ? item.text : item.kind))).toEqual(['Looking.', 'tool', 'Whole answer.']);
    expect(state.runningTurnId).toBe('t1');
  });

  it('drops a broken-off reply loaded mid-turn, and nothing when the reply had said nothing yet', () => {
    const loaded = chatFromContents(contents({ runningTurnId: 't1', runningText: 'Partial' }));
    const state = play(loaded, [ev('turn-text-reset', { reason: 'overloaded' }), ev('turn-text', { text: 'Whole' })]);
    expect(state.items).toEqual([{ kind: 'text', key: 'tt1.0', turnId: 't1', text: 'Whole' }]);
    const quiet = play(chatFromContents(contents()), [ev('turn-started', {}), ev('tool-call-started', { callId: 'k1', tool: 'snapshot', summary: '{}', tabId: null }), ev('turn-text-reset', { reason: 'overloaded' })]);
    expect(quiet.items.map((item) => item.kind)).toEqual(['tool']);
  });

  it('says a turn cut at its token limit is incomplete, with the reason', () => {
    const reason = "the model's reply was cut at its token limit (4096 tokens) in the middle of its call of click; none of that reply's calls ran";
    const state = play(chatFromContents(contents()), [
      ev('turn-started', {}),
      ev('turn-text', { text: 'I will press it.' }),
      ev('turn-finished', { status: 'incomplete', reason, toolCalls: 0, inputTokens: 9, outputTokens: 4096 }),
    ]);
    expect(state.turns[0]?.status).toBe('incomplete');
    expect(turnStatusText(state.turns[0]!)).toBe(`Incomplete — ${reason}`);
  });

  it('keeps the running text of a turn that was under way when loaded', () => {
    const state = chatAfterEvent(chatFromContents(contents({ runningTurnId: 't1', runningText: 'Half' })), ev('turn-text', { text: ' done' }));
    expect(state.items).toEqual([{ kind: 'text', key: 'tt1', turnId: 't1', text: 'Half done' }]);
  });

  it('follows the task list and sub-agents', () => {
    const state = play(chatFromContents(contents()), [
      ev('tasks-changed', { tasks: [{ id: '1', subject: 'a', description: null, status: 'completed' }, { id: '2', subject: 'b', description: null, status: 'pending' }] }),
      ev('sub-agent', { subAgentId: 's1', description: 'Find prices', type: 'researcher', phase: 'started' }),
      ev('sub-agent', { subAgentId: 's1', description: 'Find prices', type: 'researcher', phase: 'text', text: 'Found' }),
      ev('sub-agent', { subAgentId: 's1', description: 'Find prices', type: 'researcher', phase: 'finished', status: 'done' }),
    ]);
    expect(taskProgress(state.tasks)).toEqual({ done: 1, total: 2 });
    expect(state.subAgents).toEqual([{ id: 's1', description: 'Find prices', type: 'researcher', phase: 'finished', status: 'done', lastText: 'Found', lastTool: null }]);
  });

  it('keeps a failed send failed until Retry, and only a failed one is retried', () => {
    let state = chatWithSending(chatFromContents(contents()), 'local1', 'Hi', [], 'me');
    expect(chatRetrying(state, 'local1')).toBeNull();
    state = chatWithDelivery(state, 'local1', 'The host is busy.');
    expect(state.items[0]).toMatchObject({ delivery: 'failed', failure: 'The host is busy.' });
    // Events do not touch it: nothing resends on its own.
    state = play(state, [ev('turn-started', {}), ev('turn-finished', { status: 'done', reason: null, toolCalls: 0, inputTokens: 0, outputTokens: 0 })]);
    expect(state.items[0]).toMatchObject({ delivery: 'failed' });
    const retry = chatRetrying(state, 'local1');
    expect(retry?.item).toMatchObject({ text: 'Hi', delivery: 'sending' });
    expect(chatWithDelivery(retry!.state, 'local1', null).items[0]).toMatchObject({ delivery: 'sent' });
  });
});

describe('chat memory', () => {
  it('keeps drafts and unsent messages, marked failed, across connections', async () => {
    const { ChatMemory } = await import('../src/host/chat-memory');
    const memory = new ChatMemory();
    memory.setDraft(THREAD, 'half a thought');
    expect(memory.draft(THREAD)).toBe('half a thought');
    memory.setDraft(THREAD, '');
    expect(memory.draft(THREAD)).toBe('');
    memory.keepUnsent(THREAD, [
      { kind: 'user', key: 'a', text: 'sent', attachments: [], delivery: 'sent', author: 'me' },
      { kind: 'user', key: 'b', text: 'in flight', attachments: [], delivery: 'sending', author: 'me' },
    ]);
    expect(memory.failed(THREAD)).toEqual([{ kind: 'user', key: 'b', text: 'in flight', attachments: [], delivery: 'failed', failure: 'Not sent: the connection was lost.', author: 'me' }]);
    expect(localStorage.length).toBe(0);
  });

  it("keeps a failed message's files, then their paths, for a Retry until it is sent", async () => {
    const { ChatMemory } = await import('../src/host/chat-memory');
    const memory = new ChatMemory();
    const file = new File(['hello'], 'notes.txt');
    expect(memory.filesOf('none')).toEqual({ files: [], paths: [] });
    memory.setFiles('k', [file], null);
    expect(memory.filesOf('k')).toEqual({ files: [file], paths: null });
    memory.setFiles('k', [file], ['uploads/notes.txt']);
    expect(memory.filesOf('k').paths).toEqual(['uploads/notes.txt']);
    memory.sent('k');
    expect(memory.filesOf('k')).toEqual({ files: [], paths: [] });
    expect(localStorage.length).toBe(0);
  });
});

describe('a refused call’s detail', () => {
  it('reads as the host’s reason, with its code kept apart', () => {
    expect(toolDetail('vaultSiteMismatch: this login is for https://a.example, not https://b.example')).toEqual({
      code: 'vaultSiteMismatch',
      text: 'This login is for https://a.example, not https://b.example',
    });
    expect(toolDetail('The turn ended first.')).toEqual({ code: null, text: 'The turn ended first.' });
    expect(toolDetail('Error: a page said so')).toEqual({ code: null, text: 'Error: a page said so' });
  });
});

describe('a refusal read back from the thread', () => {
  it('renders the same sentence as the live card did, through one renderer', () => {
    const refusal = { error: { code: 'gatedAction', message: 'this control reads like a commit ("Place order"); a person does that' } };
    const live = play(chatFromContents(contents()), [
      ev('turn-started', {}),
      ev('tool-call-started', { callId: 't1.1', tool: 'click', summary: '{}', tabId: 'x' }),
      ev('tool-call-finished', { callId: 't1.1', tool: 'click', outcome: 'refused', summary: `gatedAction: ${refusal.error.message}` }),
    ]);
    const reloaded = chatFromContents(
      contents({
        messages: [
          { role: 'user', text: 'Buy it', attachments: [] },
          { role: 'assistant', text: '', toolCalls: [{ id: 't1.1', name: 'click', arguments: { tabId: 'x' } }] },
          { role: 'tool', callId: 't1.1', content: JSON.stringify(refusal), isError: true, description: 'Click “Place order” on Shop (shop.test)' },
          { role: 'assistant', text: '', toolCalls: [{ id: 't1.2', name: 'snapshot', arguments: { tabId: 'x' } }] },
          { role: 'tool', callId: 't1.2', content: JSON.stringify({ error: { code: 'toolFailed', message: 'the snapshot tool failed unexpectedly' } }), isError: true },
        ],
      }),
    );
    const [liveCard] = live.items as ToolItem[];
    const [, firstCard, secondCard] = reloaded.items as ToolItem[];
    expect([firstCard!.outcome, firstCard!.detail]).toEqual([liveCard!.outcome, liveCard!.detail]);
    expect([firstCard!.description, secondCard!.description]).toEqual(['Click “Place order” on Shop (shop.test)', null]);
    expect(toolDetail(firstCard!.detail)).toEqual({ code: 'gatedAction', text: 'This control reads like a commit ("Place order"); a person does that' });
    expect([secondCard!.outcome, toolDetail(secondCard!.detail).code]).toEqual(['error', 'toolFailed']);
  });

  it('says a denied call was denied by a member, live and loaded again, never the words meant for the model', () => {
    const live = play(chatFromContents(contents()), [
      ev('turn-started', {}),
      ev('tool-call-finished', { callId: 't1.1', tool: 'click', outcome: 'refused', summary: 'denied by a member' }),
    ]);
    const reloaded = chatFromContents(
      contents({
        messages: [
          { role: 'assistant', text: '', toolCalls: [{ id: 't1.1', name: 'click', arguments: { tabId: 'x' } }] },
          { role: 'tool', callId: 't1.1', content: 'The person denied this call. Nothing was done. Do not try it another way.', isError: true, description: 'Click “Pay” on Shop (shop.test)' },
        ],
      }),
    );
    const [liveCard] = live.items as ToolItem[];
    const [reloadedCard] = reloaded.items as ToolItem[];
    expect([reloadedCard!.outcome, reloadedCard!.detail]).toEqual([liveCard!.outcome, liveCard!.detail]);
    expect(toolDetail(reloadedCard!.detail).text).toBe(DENIED_FOR_PEOPLE);
  });
});

describe('needsProviderKey', () => {
  const turn = (status: 'error' | 'done', code: string | null) => ({ id: 't', status, reason: 'in words', code, toolCalls: 0, inputTokens: 0, outputTokens: 0 });

  it('holds for a turn the host ended for want of a provider key, by its code', () => {
    expect(needsProviderKey(turn('error', 'providerKeyMissing'))).toBe(true);
    expect(needsProviderKey(turn('error', 'providerKeyRefused'))).toBe(true);
  });

  it('does not hold for other failures or a finished turn, whatever the words', () => {
    expect(needsProviderKey({ ...turn('error', null), reason: 'no API key is set for Anthropic' })).toBe(false);
    expect(needsProviderKey(turn('error', 'providerNoModel'))).toBe(false);
    expect(needsProviderKey(turn('done', 'providerKeyMissing'))).toBe(false);
  });

  it('reads the code from turn-finished and from a reloaded thread', () => {
    const finished = { status: 'error', reason: 'no API key is set for Anthropic', code: 'providerKeyMissing', toolCalls: 0, inputTokens: 0, outputTokens: 0 };
    const live = chatAfterEvent(chatFromContents(contents()), ev('turn-finished', { ...finished, turnId: 't1' }));
    expect(needsProviderKey(live.turns[0]!)).toBe(true);
    const reloaded = chatFromContents(contents({ turns: [{ ...finished, id: 't1', startedAt: 1, endedAt: 2 }] }));
    expect(needsProviderKey(reloaded.turns[0]!)).toBe(true);
  });
});

describe('the queue', () => {
  const queued = (id: string, text: string, steer = false) => ({ id, threadId: THREAD, accountId: 'me', text, attachments: ['notes.txt'], steer, createdAt: 1, updatedAt: 1 });

  it('shows a message sent during a turn in the queue, not in the conversation, until a turn takes it', () => {
    let state = chatFromContents(contents({ runningTurnId: 't1' }));
    state = chatWithSending(state, 'local1', 'And blue', [], 'me');
    state = play(state, [ev('queued-message-added', { queued: queued('q1', 'And blue') })]);
    state = chatWithQueued(state, 'local1');
    expect(state.items).toEqual([]);
    expect(state.queued.map((q) => q.text)).toEqual(['And blue']);

    state = play(state, [ev('queued-message-updated', { queued: queued('q1', 'And navy', true) })]);
    expect(state.queued.map((q) => [q.text, q.steer])).toEqual([['And navy', true]]);

    state = play(state, [ev('queued-message-taken', { id: 'q1', turnId: 't1', steered: true })]);
    expect(state.queued).toEqual([]);
    expect(state.items).toEqual([{ kind: 'user', key: 'qq1', text: 'And navy', attachments: [{ name: 'notes.txt', sha256: null, preview: false }], delivery: 'sent', author: 'me' }]);
  });

  it('drops a cancelled message, and loads the queue with the thread', () => {
    let state = chatFromContents(contents({ queued: [queued('q1', 'One'), queued('q2', 'Two')] }));
    state = play(state, [ev('queued-message-cancelled', { id: 'q1' }), ev('queued-message-updated', { queued: queued('q9', 'Gone') })]);
    expect(state.queued.map((q) => q.id)).toEqual(['q2']);
    // Another thread's queue is not this one's.
    state = play(state, [{ event: 'queued-message-cancelled', data: { threadId: OTHER, id: 'q2' } }]);
    expect(state.queued.map((q) => q.id)).toEqual(['q2']);
  });

  it('words an interrupted turn', () => {
    expect(turnStatusText({ id: 't', status: 'interrupted', reason: 'the host stopped while this turn ran', code: null, toolCalls: 0, inputTokens: 0, outputTokens: 0 })).toBe('Interrupted — the host stopped while this turn ran');
  });
});

describe('a spent budget', () => {
  const turn = { id: 't1', status: 'budget' as const, reason: 'The budget “Month” is spent.', code: 'budgetExceeded', toolCalls: 0, inputTokens: 0, outputTokens: 0 };

  it('is a turn that ended budget, whose words name the budget', () => {
    expect(stoppedByBudget(turn)).toBe(true);
    expect(stoppedByBudget({ ...turn, status: 'done', code: null })).toBe(false);
    expect(turnStatusText(turn)).toBe('Stopped: a budget is spent — The budget “Month” is spent.');
  });

  it('is a refused send whose sentence is the host’s, or the client’s own without one', () => {
    expect(budgetRefusal({ code: 'budgetExceeded', message: 'The budget “Month” is spent.' }, 'fallback')).toBe('The budget “Month” is spent.');
    expect(budgetRefusal({ code: 'budgetExceeded', message: '' }, 'fallback')).toBe('fallback');
    expect(budgetRefusal({ code: 'turnRunning', message: 'x' }, 'fallback')).toBeNull();
    expect(budgetRefusal(new Error('boom'), 'fallback')).toBeNull();
    const state = chatWithDelivery(chatWithSending(chatFromContents(contents()), 'k1', 'Go', [], 'me'), 'k1', 'The budget “Month” is spent.', true);
    expect(state.items[0]).toMatchObject({ delivery: 'failed', budget: true });
    expect(chatRetrying(state, 'k1')!.item.budget).toBeUndefined();
  });
});

describe('writerOf', () => {
  it('is who sent a message when that is known, else the thread’s starter', () => {
    const loaded = chatFromContents(
      contents({
        thread: { ...contents().thread, createdBy: 'owner', shared: true },
        messages: [
          { role: 'user', text: 'stored, no writer kept', attachments: [] },
          { role: 'user', text: 'stored with its writer', attachments: [], accountId: 'member' },
        ],
      }),
    );
    const sent = chatWithSending(loaded, 'local1', 'mine', [], 'member');
    const writers = sent.items.map((item) => (item.kind === 'user' ? writerOf(item, { createdBy: 'owner' }, 'member') : null));
    expect(writers).toEqual(['owner', 'member', 'member']);
  });
});

describe('a message that starts a turn', () => {
  const started = (accountId: string | null) =>
    ev('turn-started', { userMessage: { accountId, text: 'Book the 9:10', attachments: ['plan.pdf'] } });

  it('shows another member’s message as their turn starts', () => {
    const state = play(chatFromContents(contents()), [started('acct-ana')], 'acct-bo');
    const [item] = state.items;
    expect(item).toMatchObject({ kind: 'user', text: 'Book the 9:10', author: 'acct-ana', delivery: 'sent' });
    expect(item.kind === 'user' && item.attachments.map((a) => a.name)).toEqual(['plan.pdf']);
    expect(state.runningTurnId).toBe('t1');
  });

  it('adds nothing for the viewer’s own message, or the same start heard twice', () => {
    expect(play(chatFromContents(contents()), [started('acct-bo')], 'acct-bo').items).toEqual([]);
    expect(play(chatFromContents(contents()), [started('acct-ana'), started('acct-ana')], 'acct-bo').items).toHaveLength(1);
  });

  it('shows a routine’s message, which no person wrote', () => {
    expect(play(chatFromContents(contents()), [started(null)], 'acct-bo').items).toHaveLength(1);
  });
});
