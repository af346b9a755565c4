/** The Usage section: the chart and table of the host's answers, "no price", the CSV, who sees Budgets; the Budgets editor; a budget's refusal in the chat. */
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChatPanel, type AgentView } from '../src/components/host/ChatPanel';
import { UsagePanel, type UsageView } from '../src/components/host/UsagePanel';
import { ChatMemory } from '../src/host/chat-memory';
import { HostCallError, type HostConnection } from '../src/host/connection';
import type { Role } from '../src/host/protocol';
import { CAPABILITY } from '../src/host/protocol';
import { hostSections } from '../src/screens/HostScreen';
import { button, fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';

const SCOUT = 'a'.repeat(32);
const CUSTOM = 'b'.repeat(32);
const MAYA = 'c'.repeat(32);
const THREAD = 'd'.repeat(32);
const SPENT = 'The budget “Scout’s month” is spent ($2.000000 of $2.000000 used for the month from 2026-12-01). An owner or admin of the team can raise it in Usage → Budgets.';

function agent(id: string, name: string): AgentView {
  return { id, name, instructions: '', provider: 'anthropic', model: null, permissions: {}, maxToolCalls: null, ownBrowserSession: false, browserProfileId: null, createdAt: 1, updatedAt: 1, mayAsk: [] };
}
const AGENTS = [agent(SCOUT, 'Scout'), agent(CUSTOM, 'Local')];
const MEMBERS = new Map([[MAYA, 'Maya']]);

function usageRow(key: Record<string, string>, fields: Record<string, unknown>) {
  return { key, requests: 2, inputTokens: 1200, outputTokens: 80, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: null, cost: null, unpricedRequests: 0, ...fields };
}

const ANSWERS: Record<string, unknown> = {
  'usage-v1/settings-get': { timeZone: 'UTC', currency: 'USD', rate: '1' },
  'usage-v1/series': {
    from: '2026-12-01',
    to: '2026-12-02',
    by: ['day', 'agent'],
    timeZone: 'UTC',
    currency: 'USD',
    rows: [
      usageRow({ day: '2026-12-01', agent: SCOUT }, { costUsd: '0.012000', cost: '0.0120' }),
      usageRow({ day: '2026-12-02', agent: CUSTOM }, { unpricedRequests: 2 }),
    ],
  },
  'usage-v1/summary': {
    from: '2026-12-01',
    to: '2026-12-02',
    by: ['agent'],
    timeZone: 'UTC',
    currency: 'USD',
    rows: [usageRow({ agent: SCOUT }, { costUsd: '0.012000', cost: '0.0120', inputTokens: 5000 }), usageRow({ agent: CUSTOM }, { unpricedRequests: 2 })],
  },
  'usage-v1/csv': { filename: 'usage-2026-12-01-2026-12-02.csv', csv: '"agent","requests"\r\n' },
  'budgets-v1/list': {
    budgets: [{ id: 'e'.repeat(32), name: 'Scout’s month', scope: 'agent', targetId: SCOUT, period: 'month', firstDay: '2026-12-01', lastDay: '2026-12-31', unit: 'cost', amount: '2.000000', used: '1.700000', percent: 85 }],
  },
  'routines-v1/list': { routines: [] },
};

const mount = mountPoint();

beforeEach(() => {
  vi.stubGlobal('URL', Object.assign(Object.create(URL) as object, URL, { createObjectURL: vi.fn(() => 'blob:usage'), revokeObjectURL: vi.fn() }));
});
afterEach(() => vi.unstubAllGlobals());

async function usage(role: Role, view: UsageView = 'spending', answers = ANSWERS) {
  const { connection, calls } = fakeConnection(answers);
  const views: UsageView[] = [];
  await show(<UsagePanel connection={connection} role={role} budgetsServed agents={AGENTS} members={MEMBERS} view={view} onView={(v) => views.push(v)} />, mount.element);
  await act(async () => {});
  return { connection, calls, views };
}

describe('the Usage section', () => {
  it('shows the agents’ bars and rows, with "no price" where the host has none', async () => {
    const { calls } = await usage('admin');
    const panel = mount.element;
    const series = calls.find(([route]) => route === 'usage-v1/series')![1] as Record<string, unknown>;
    expect(series.stackBy).toBe('agent');
    expect(series.to).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(series.from).toBe(`${String(series.to).slice(0, 8)}01`);
    expect(panel.querySelectorAll('.usage-bar')).toHaveLength(2);
    // Cost is the default: the unpriced day draws no bar segment.
    expect(panel.querySelectorAll('.usage-bar rect')).toHaveLength(1);
    const rows = [...panel.querySelectorAll('.usage-table tbody tr')].map((tr) => [...tr.children].map((cell) => cell.textContent));
    expect(rows).toEqual([
      ['Scout', '2', '5,000', '80', '0.0120 USD'],
      ['Local', '2', '1,200', '80', 'no price'],
    ]);
    expect(panel.querySelector('[aria-label="Usage views"]')).not.toBeNull();
  });

  it('stacks tokens by the grouping chosen, and asks again', async () => {
    const { calls } = await usage('owner');
    await act(async () => button(mount.element, 'Tokens').click());
    expect(mount.element.querySelectorAll('.usage-bar rect')).toHaveLength(2);
    await act(async () => button(mount.element, 'Provider').click());
    await act(async () => {});
    expect(calls.filter(([route]) => route === 'usage-v1/summary').map(([, args]) => (args as { by: string[] }).by)).toEqual([['agent'], ['provider']]);
  });

  it('asks a custom range, and says what is wrong with one', async () => {
    const { calls } = await usage('admin');
    await typeInto(mount.element.querySelector<HTMLSelectElement>('select[aria-label="Range"]')!, 'custom', 'change');
    await typeInto(mount.element.querySelector<HTMLInputElement>('input[aria-label="From"]')!, '2026-11-01');
    await typeInto(mount.element.querySelector<HTMLInputElement>('input[aria-label="To"]')!, '2026-11-15');
    await act(async () => {});
    expect(calls.at(-1)![1]).toMatchObject({ from: '2026-11-01', to: '2026-11-15' });
    await typeInto(mount.element.querySelector<HTMLInputElement>('input[aria-label="To"]')!, '2026-10-15');
    expect(mount.element.textContent).toContain('The first day comes after the last.');
  });

  it('exports the summary as the host’s CSV', async () => {
    const { calls } = await usage('member');
    await act(async () => button(mount.element, 'Export CSV').click());
    await act(async () => {});
    expect(calls.find(([route]) => route === 'usage-v1/csv')![1]).toMatchObject({ by: ['agent'] });
    expect(mount.element.querySelector<HTMLAnchorElement>('a[download]')!.getAttribute('download')).toBe('usage-2026-12-01-2026-12-02.csv');
  });

  it('shows a member their own use, with no Budgets', async () => {
    const { calls } = await usage('member', 'budgets');
    expect(mount.element.textContent).toContain('your own');
    expect(mount.element.querySelector('[aria-label="Usage views"]')).toBeNull();
    expect(calls.some(([route]) => route.startsWith('budgets-v1'))).toBe(false);
  });

  it('is a section of hosts that serve usage-v1', () => {
    const every = new Set<string>(Object.values(CAPABILITY));
    expect(hostSections(every)).toContain('usage');
    every.delete(CAPABILITY.usage);
    expect(hostSections(every)).not.toContain('usage');
  });
});

describe('the Budgets editor', () => {
  it('lists a budget with its use, and adds one once the form is right', async () => {
    const { calls, views } = await usage('admin', 'budgets');
    const panel = mount.element;
    const row = panel.querySelector('.budget-row')!;
    expect(row.textContent).toContain('Agent Scout');
    expect(row.textContent).toContain('85 %');
    expect(row.textContent).toContain('$1.70 of $2.00 used, this month (from 2026-12-01)');
    await act(async () => button(panel, 'Spending').click());
    expect(views).toEqual(['spending']);

    const form = panel.querySelector<HTMLFormElement>('form[aria-label="Add a budget"]')!;
    await submit(form);
    expect(form.textContent).toContain('Name the budget.');
    expect(calls.some(([route]) => route === 'budgets-v1/create')).toBe(false);
    await typeInto(form.querySelector<HTMLInputElement>('input[aria-label="Name"]')!, 'Maya’s month');
    await typeInto(form.querySelector<HTMLSelectElement>('select[aria-label="For"]')!, 'member', 'change');
    await typeInto(form.querySelector<HTMLSelectElement>('select[aria-label="Which member"]')!, MAYA, 'change');
    await typeInto(form.querySelector<HTMLSelectElement>('select[aria-label="Counted in"]')!, 'tokens', 'change');
    await typeInto(form.querySelector<HTMLInputElement>('input[aria-label="Amount"]')!, '50000');
    await submit(form);
    await act(async () => {});
    expect(calls).toContainEqual(['budgets-v1/create', { name: 'Maya’s month', scope: 'member', targetId: MAYA, period: 'month', unit: 'tokens', amount: '50000' }]);
    expect(calls.filter(([route]) => route === 'budgets-v1/list')).toHaveLength(2);
  });

  it('edits and deletes a budget', async () => {
    const { calls } = await usage('owner', 'budgets');
    const row = mount.element.querySelector('.budget-row')!;
    await act(async () => button(row, 'Edit').click());
    const edit = row.querySelector<HTMLFormElement>('form')!;
    expect(edit.querySelector<HTMLInputElement>('input[aria-label="Amount"]')!.value).toBe('2');
    await typeInto(edit.querySelector<HTMLInputElement>('input[aria-label="Amount"]')!, '10');
    await submit(edit);
    await act(async () => {});
    expect(calls).toContainEqual(['budgets-v1/update', { id: 'e'.repeat(32), name: 'Scout’s month', scope: 'agent', targetId: SCOUT, period: 'month', unit: 'cost', amount: '10' }]);
    await act(async () => button(row, 'Delete').click());
    await act(async () => button(row, 'Delete').click());
    expect(calls).toContainEqual(['budgets-v1/delete', { id: 'e'.repeat(32) }]);
  });
});

/** A chat whose sends a spent budget refuses, and whose last turn a budget ended. */
function budgetChat(status: string) {
  const contents = {
    thread: { id: THREAD, agentId: SCOUT, createdBy: 'me', shared: false, title: 'Work', createdAt: 1, updatedAt: 1, parentThreadId: null, parentAgentId: null },
    messages: [{ role: 'user', text: 'Go on' }],
    turns: [{ id: 't1', status, reason: status === 'budget' ? SPENT : null, code: status === 'budget' ? 'budgetExceeded' : null, toolCalls: 0, inputTokens: 10, outputTokens: 2, startedAt: 1, endedAt: 2 }],
    runningTurnId: null,
    runningText: '',
    tasks: [],
    queued: [],
    delegations: [],
  };
  return {
    call: vi.fn(async (route: string) => {
      if (route === 'threads-v1/send') throw new HostCallError('budgetExceeded', SPENT);
      if (route === 'threads-v1/get') return contents;
      if (route === 'threads-v1/list') return { threads: [] };
      return {};
    }),
    onEvent: () => () => {},
  } as unknown as HostConnection;
}

async function openChat(connection: HostConnection, onBudgets: (() => void) | null) {
  await show(
    <ChatPanel
      connection={connection}
      meId="me"
      agents={AGENTS}
      agentsError={null}
      memory={new ChatMemory()}
      selection={{ agentId: SCOUT, threadId: THREAD }}
      onSelection={() => {}}
      requests={[]}
      alwaysAllow={null}
      manager={onBudgets !== null}
      onWatch={null}
      onProviders={null}
      onBudgets={onBudgets}
    />,
    mount.element,
  );
  await act(async () => {});
}

describe('a budget’s refusal in the chat', () => {
  beforeEach(() => vi.stubGlobal('ResizeObserver', class { observe() {} disconnect() {} }));

  it('names the budget and who can raise it; an admin gets Open Budgets', async () => {
    let opened = 0;
    await openChat(budgetChat('budget'), () => opened++);
    const status = mount.element.querySelector('.conversation-status')!;
    expect(status.getAttribute('data-turn-status')).toBe('budget');
    expect(status.textContent).toContain('“Scout’s month” is spent');
    expect(status.textContent).toContain('An owner or admin of the team can raise it');
    await act(async () => button(status, 'Open Budgets').click());
    expect(opened).toBe(1);

    await typeInto(mount.element.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]')!, 'Again');
    await submit(mount.element.querySelector<HTMLFormElement>('form.composer')!);
    await act(async () => {});
    const failed = mount.element.querySelector('.chat-failed')!;
    expect(failed.textContent).toContain(`Not sent. ${SPENT}`);
    await act(async () => button(failed, 'Open Budgets').click());
    expect(opened).toBe(2);
  });

  it('gives a member the sentence without the link', async () => {
    await openChat(budgetChat('budget'), null);
    await typeInto(mount.element.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]')!, 'Again');
    await submit(mount.element.querySelector<HTMLFormElement>('form.composer')!);
    await act(async () => {});
    expect(mount.element.querySelector('.chat-failed')!.textContent).toContain(SPENT);
    expect(mount.element.textContent).not.toContain('Open Budgets');
  });
});
