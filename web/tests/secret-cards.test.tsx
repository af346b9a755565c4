/** Requests for a secret and for a vault item: what is typed goes once, to the right route, and is gone from the card. */
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AttentionCards } from '../src/components/host/AttentionCards';
import type { AttentionRequest } from '../src/host/attention';
import type { HostConnection } from '../src/host/connection';

const SECRET: AttentionRequest = {
  id: 'r'.repeat(32),
  kind: 'secret',
  threadId: 't',
  agentId: 'a',
  callId: 'c',
  tool: 'submit_secret',
  summary: 'sign in',
  description: null,
  argumentsHash: '',
  expiresAt: 0,
  question: null,
  options: null,
  multiple: false,
  secret: { tabId: 'tab', origin: 'https://shop.example', purpose: 'sign in', vaultOffered: true, fields: [{ label: 'Password', kind: 'password' }] },
  vaultItem: null,
};
const ITEM: AttentionRequest = {
  ...SECRET,
  id: 'v'.repeat(32),
  kind: 'vaultItem',
  tool: 'request_vault_item',
  secret: null,
  vaultItem: { kind: 'login', prefill: { name: 'Shop', username: 'ada', sites: ['https://shop.example'] }, reason: 'to sign in next time' },
};

function fake() {
  const calls: Array<[string, unknown]> = [];
  const connection = { call: vi.fn(async (route: string, args: unknown) => (calls.push([route, args]), {})), onEvent: () => () => {} } as unknown as HostConnection;
  return { connection, calls };
}

let container: HTMLElement;
beforeEach(() => {
  container = document.createElement('div');
  document.body.append(container);
});
afterEach(() => {
  render(null, container);
  container.remove();
});

async function show(connection: HostConnection, request: AttentionRequest, manager: boolean) {
  await act(async () => {
    render(<AttentionCards connection={connection} requests={[request]} agentNames={new Map([['a', 'Scout']])} alwaysAllow={null} manager={manager} />, container);
  });
}

async function type(input: HTMLInputElement, value: string) {
  await act(async () => {
    input.value = value;
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

async function press(name: string) {
  const button = [...container.querySelectorAll('button')].find((b) => b.textContent?.trim() === name)!;
  await act(async () => button.click());
}

describe('a request for a secret', () => {
  it('sends what a member typed on the handoff route once, masked, and empties the field', async () => {
    const { connection, calls } = fake();
    await show(connection, SECRET, false);
    expect(container.textContent).toContain('Scout needs a secret for a page');
    expect(container.textContent).toContain('https://shop.example');
    const input = container.querySelector<HTMLInputElement>('input[type="password"]')!;
    const save = container.querySelector<HTMLInputElement>('input[type="checkbox"]')!;
    expect(save.disabled).toBe(true);
    expect(container.textContent).toContain('only owners and admins save to the vault');
    await type(input, 'hunter2');
    await press('Enter it');
    expect(calls).toEqual([['browser-secret-handoff-v1/submit', { id: SECRET.id, values: ['hunter2'] }]]);
    expect(input.value).toBe('');
    expect(container.innerHTML).not.toContain('hunter2');
  });

  it('lets an owner or admin save it to the vault, and anyone decline', async () => {
    const { connection, calls } = fake();
    await show(connection, SECRET, true);
    await type(container.querySelector<HTMLInputElement>('input[type="password"]')!, 'pw');
    await act(async () => container.querySelector<HTMLInputElement>('input[type="checkbox"]')!.click());
    await press('Enter it');
    expect(calls.at(-1)).toEqual(['browser-secret-vault-v1/submit', { id: SECRET.id, values: ['pw'] }]);
    render(null, container); // a fresh card, as for another person
    const { connection: other, calls: declined } = fake();
    await show(other, SECRET, false);
    await press('Decline');
    expect(declined).toEqual([['browser-secret-handoff-v1/decline', { id: SECRET.id, kind: 'secret' }]]);
  });
});

describe('a request for a vault item', () => {
  it('is prefilled with the agent’s values, never a secret, and added by an admin', async () => {
    const { connection, calls } = fake();
    await show(connection, ITEM, true);
    const inputs = [...container.querySelectorAll<HTMLInputElement>('input')];
    expect(inputs.map((i) => i.value)).toEqual(['Shop', 'ada', '', '']);
    await type(inputs[2]!, 's3cret');
    await press('Add to the vault');
    expect(calls).toEqual([
      ['browser-secret-vault-v1/add_item', { id: ITEM.id, name: 'Shop', username: 'ada', password: 's3cret', sites: ['https://shop.example'] }],
    ]);
  });

  it('offers a member only to decline', async () => {
    const { connection } = fake();
    await show(connection, ITEM, false);
    expect(container.querySelectorAll('input')).toHaveLength(0);
    expect(container.textContent).toContain('Only owners and admins add items to the vault.');
  });
});

describe('a consent request', () => {
  it("says what will happen in the host's words, with the raw call behind Details", async () => {
    const { connection, calls } = fake();
    const consent: AttentionRequest = {
      ...SECRET,
      id: 'c'.repeat(32),
      kind: 'consent',
      tool: 'click',
      summary: 'click {"tabId": "1a1d", "target": {"kind": "ref", "ref": "1:main:1"}}',
      description: 'Click “Empty basket” on Shop (shop.test)',
      argumentsHash: 'f'.repeat(64),
      secret: null,
    };
    await show(connection, consent, false);
    expect(container.querySelector('.attention-what')?.textContent).toBe('Click “Empty basket” on Shop (shop.test)');
    const details = container.querySelector<HTMLDetailsElement>('details.attention-details')!;
    expect(details.open).toBe(false);
    expect(details.querySelector('summary')?.textContent).toBe('Details');
    expect(details.querySelector('pre')?.textContent).toBe(consent.summary);
    await press('Approve');
    expect(calls).toEqual([['attention-v1/answer', { id: consent.id, approve: true, argumentsHash: consent.argumentsHash }]]);
  });
});
