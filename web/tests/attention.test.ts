/** Requests from agents: added once, removed wherever they were answered, answered as shown. */
import { describe, expect, it } from 'vitest';
import { attentionAfterEvent, consentAnswer, questionForm, questionReply, toggleChoice, type AttentionRequest } from '../src/host/attention';

const ID = 'd'.repeat(32);

function request(extra: Partial<AttentionRequest> = {}): AttentionRequest {
  return { id: ID, kind: 'consent', threadId: 't', agentId: 'a', callId: 'c', tool: 'click', summary: 'click "Buy" on shop.example', argumentsHash: 'f'.repeat(64), expiresAt: 0, question: null, options: null, multiple: false, secret: null, vaultItem: null, description: null, ...extra };
}

describe('attention', () => {
  it('adds a request once and removes it when it is resolved anywhere', () => {
    const event = { event: 'attention-requested', data: { id: ID, kind: 'question', threadId: 't', agentId: 'a', callId: 'c', tool: 'ask_user', summary: 's', expiresAt: 5, question: 'Which?', options: ['A', 'B'], multiple: true } };
    const one = attentionAfterEvent([], event);
    expect(one).toHaveLength(1);
    expect(one[0]).toMatchObject({ kind: 'question', options: ['A', 'B'], multiple: true });
    expect(attentionAfterEvent(one, event)).toBe(one);
    expect(attentionAfterEvent(one, { event: 'attention-resolved', data: { id: 'e'.repeat(32), threadId: 't', outcome: 'approved' } })).toBe(one);
    expect(attentionAfterEvent(one, { event: 'attention-resolved', data: { id: ID, threadId: 't', outcome: 'approved' } })).toEqual([]);
  });

  it('approves only the call that was shown when its hash is known', () => {
    expect(consentAnswer(request(), true)).toEqual({ id: ID, approve: true, argumentsHash: 'f'.repeat(64) });
    expect(consentAnswer(request({ argumentsHash: '' }), false)).toEqual({ id: ID, approve: false });
  });

  it('answers a question with free text, one option or several', () => {
    const text = request({ kind: 'question', question: 'Name?' });
    expect(questionForm(text)).toEqual({ kind: 'text' });
    expect(questionReply(text, [], '  ')).toBeNull();
    expect(questionReply(text, [], ' Ann ')).toEqual({ id: ID, answer: 'Ann' });

    const single = request({ kind: 'question', options: ['Red', 'Blue'] });
    let chosen = toggleChoice(single, [], 'Red');
    chosen = toggleChoice(single, chosen, 'Blue');
    expect(chosen).toEqual(['Blue']);
    expect(questionReply(single, chosen, '')).toEqual({ id: ID, answer: 'Blue' });
    expect(questionReply(single, [], '')).toBeNull();

    const multiple = request({ kind: 'question', options: ['Red', 'Blue', 'Green'], multiple: true });
    chosen = toggleChoice(multiple, toggleChoice(multiple, toggleChoice(multiple, [], 'Green'), 'Red'), 'Green');
    expect(chosen).toEqual(['Red']);
    // Options are sent in the order the agent gave them, and only real ones.
    expect(questionReply(multiple, ['Green', 'Red', 'Pink'], '')).toEqual({ id: ID, answer: ['Red', 'Green'] });
  });
});

describe('always allow', () => {
  it("auto-approves the tool's family and keeps the agent's other permissions", async () => {
    const { alwaysAllowPermissions } = await import('../src/host/attention');
    const context = { permissions: { 'browser-navigation': 'auto-approve', 'browser-script': 'ask' }, familyOfTool: { click: 'browser-input', open: 'browser-navigation' } };
    expect(alwaysAllowPermissions(request(), context)).toEqual({ 'browser-navigation': 'auto-approve', 'browser-script': 'ask', 'browser-input': 'auto-approve' });
    expect(alwaysAllowPermissions(request({ tool: 'snapshot' }), context)).toBeNull();
    expect(alwaysAllowPermissions(request({ kind: 'question', tool: 'click' }), context)).toBeNull();
  });
});
