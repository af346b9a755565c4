/** Requests from agents for a person: shown for open tabs, opened or dismissed by a member. */
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TakeoverRequests, takeoverRequestFrom } from '../src/components/host/TakeoverRequests';
import type { TabView } from '../src/host/protocol';

const TAB: TabView = {
  id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  url: 'https://shop.example.com/checkout',
  title: 'Checkout',
  icon: null,
  ownerAgentId: 'a'.repeat(32),
  openerTabId: null,
  partitionKind: 'shared',
  partitionLabel: 'Shared',
  hue: null,
  heldByPerson: false,
  heldBy: null,
  loaded: true,
};

let container: HTMLElement;

beforeEach(() => {
  container = document.createElement('div');
  document.body.append(container);
});

afterEach(() => {
  render(null, container);
  container.remove();
});

describe('takeoverRequestFrom', () => {
  it('reads the host’s event data and refuses anything else', () => {
    expect(takeoverRequestFrom({ tabId: TAB.id, agentId: 'a'.repeat(32), threadId: null, reason: 'a sign-in needs your code' })).toEqual({
      tabId: TAB.id,
      agentId: 'a'.repeat(32),
      reason: 'a sign-in needs your code',
    });
    expect(takeoverRequestFrom({ tabId: TAB.id })).toEqual({ tabId: TAB.id, agentId: null, reason: '' });
    expect(takeoverRequestFrom({ tabId: 5 })).toBeNull();
    expect(takeoverRequestFrom('tab')).toBeNull();
    expect(takeoverRequestFrom(null)).toBeNull();
  });
});

describe('TakeoverRequests', () => {
  it('shows requests for open tabs only, and opens or dismisses one', async () => {
    const onOpen = vi.fn();
    const onDismiss = vi.fn();
    const requests = [
      { tabId: TAB.id, agentId: 'a'.repeat(32), reason: 'a sign-in needs your code' },
      { tabId: 'closed-tab', agentId: null, reason: 'gone' },
    ];
    const names = new Map([['a'.repeat(32), 'Scout']]);
    await act(async () => {
      render(<TakeoverRequests requests={requests} tabs={[TAB]} agentNames={names} onOpen={onOpen} onDismiss={onDismiss} />, container);
    });
    const items = container.querySelectorAll('li');
    expect(items).toHaveLength(1);
    expect(items[0]!.textContent).toContain('Scout asks a person to take over shop.example.com/checkout.');
    expect(items[0]!.textContent).toContain('a sign-in needs your code');
    const [open, dismiss] = [...items[0]!.querySelectorAll('button')];
    await act(async () => open!.click());
    await act(async () => dismiss!.click());
    expect(onOpen).toHaveBeenCalledWith(TAB.id);
    expect(onDismiss).toHaveBeenCalledWith(TAB.id);
  });

  it('draws nothing when no request is for an open tab', async () => {
    await act(async () => {
      render(<TakeoverRequests requests={[{ tabId: 'x', agentId: null, reason: '' }]} tabs={[TAB]} agentNames={new Map()} onOpen={() => {}} onDismiss={() => {}} />, container);
    });
    expect(container.innerHTML).toBe('');
  });
});

describe('TakeoverRequests naming the agent', () => {
  it('says "An agent" for an agent this member cannot list (or none)', async () => {
    const requests = [{ tabId: TAB.id, agentId: 'b'.repeat(32), reason: '' }];
    await act(async () => {
      render(<TakeoverRequests requests={requests} tabs={[TAB]} agentNames={new Map()} onOpen={() => {}} onDismiss={() => {}} />, container);
    });
    expect(container.textContent).toContain('An agent asks a person to take over');
    expect(container.textContent).not.toContain('bbbbbb');
  });
});
