/** Chats between agents: the links between an asking chat and the chats it started, and the
 * "may ask" choice on each agent's settings. */
import { act } from 'preact/test-utils';
import { describe, expect, it } from 'vitest';
import { AgentsAdmin } from '../src/components/host/AgentsAdmin';
import type { AgentView } from '../src/components/host/ChatPanel';
import { DelegationLinks, linksAfterEvent, type ChatLink } from '../src/components/host/DelegationLinks';
import { button, fakeConnection, mountPoint, show, submit } from './host-fakes';

const LEAD = 'a'.repeat(32);
const PRICER = 'b'.repeat(32);
const BOSS = 'c'.repeat(32);
const THREAD = 'd'.repeat(32);
const CHILD = 'e'.repeat(32);
const NAMES = new Map([
  [LEAD, 'Lead'],
  [PRICER, 'Pricer'],
]);

function agent(id: string, name: string, mayAsk: string[] = []): AgentView {
  return {
    id,
    name,
    instructions: '',
    provider: 'anthropic',
    model: null,
    permissions: {},
    maxToolCalls: null,
    ownBrowserSession: false,
    browserProfileId: null,
    createdAt: 1,
    updatedAt: 1,
    mayAsk,
  };
}

const mount = mountPoint();

describe('links between chats', () => {
  it('says who asked a chat and whom it asked, each a link to that chat', async () => {
    const opened: ChatLink[] = [];
    const parent = { threadId: THREAD, agentId: LEAD };
    const asked = [{ threadId: CHILD, agentId: PRICER }];
    await show(<DelegationLinks askedBy={parent} asked={asked} agentNames={NAMES} onOpen={(link) => opened.push(link)} />, mount.element);
    expect(mount.element.textContent).toContain('Asked by Lead');
    expect(mount.element.textContent).toContain('Asked Pricer');
    button(mount.element, 'Lead').click();
    button(mount.element, 'Pricer').click();
    expect(opened).toEqual([parent, asked[0]]);
  });

  it('shows nothing for a chat no agent asked and that asked none', async () => {
    await show(<DelegationLinks askedBy={null} asked={[]} agentNames={NAMES} onOpen={() => {}} />, mount.element);
    expect(mount.element.textContent).toBe('');
  });

  it('adds the chat a delegation-started event of this chat names, once', () => {
    const event = { event: 'delegation-started', data: { threadId: THREAD, turnId: 't', callId: 't.1', childThreadId: CHILD, agentId: PRICER } };
    const once = linksAfterEvent([], event, THREAD);
    expect(once).toEqual([{ threadId: CHILD, agentId: PRICER }]);
    expect(linksAfterEvent(once, event, THREAD)).toBe(once);
    expect(linksAfterEvent([], event, CHILD)).toEqual([]);
    expect(linksAfterEvent([], { event: 'turn-started', data: { threadId: THREAD, turnId: 't' } }, THREAD)).toEqual([]);
  });
});

describe('may ask', () => {
  const agents = [agent(LEAD, 'Lead'), agent(PRICER, 'Pricer'), agent(BOSS, 'Boss', [LEAD])];
  const answers = { 'providers-v1/list': { providers: [] } };

  it('lets an admin choose the other agents an agent may ask, and saves them', async () => {
    const { connection, calls } = fakeConnection(answers);
    await show(<AgentsAdmin connection={connection} role="admin" agents={agents} toolFamilies={[]} profilesServed={false} tabs={[]} />, mount.element);
    const row = mount.element.querySelector(`[data-agent="${LEAD}"]`)!;
    const choices = [...row.querySelectorAll('fieldset')].find((f) => f.querySelector('legend')?.textContent === 'May ask')!;
    const labels = [...choices.querySelectorAll('label')].map((l) => l.textContent);
    expect(labels).toEqual(['Pricer', 'Boss']); // never itself
    const pricer = [...choices.querySelectorAll('label')].find((l) => l.textContent === 'Pricer')!.querySelector('input')!;
    await act(async () => pricer.click());
    await submit(row.querySelector('form')!);
    const update = calls.find(([route]) => route === 'agents-v1/update');
    expect(update?.[1]).toMatchObject({ id: LEAD, mayAsk: [PRICER] });
  });

  it('shows a member the choice without letting them change it', async () => {
    const { connection } = fakeConnection(answers);
    await show(<AgentsAdmin connection={connection} role="member" agents={agents} toolFamilies={[]} profilesServed={false} tabs={[]} />, mount.element);
    const row = mount.element.querySelector(`[data-agent="${BOSS}"]`)!;
    const boxes = [...row.querySelectorAll<HTMLInputElement>('fieldset input[type="checkbox"]')];
    expect(boxes.map((b) => [b.checked, b.disabled])).toEqual([
      [true, true],
      [false, true],
    ]);
  });
});
