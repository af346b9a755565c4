/** A host that lacks a capability: the live view offers nothing of it, and opens no channel for it. */
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LiveView } from '../src/components/host/LiveView';
import { TabList } from '../src/components/host/TabList';
import type { HostConnection } from '../src/host/connection';
import { CAPABILITY, viewFeatures, type TabView } from '../src/host/protocol';

const TAB: TabView = {
  id: '0f8fad5b-d9cb-469f-a165-70867728950e',
  url: 'http://127.0.0.1:8080/page',
  title: 'Page',
  icon: null,
  ownerAgentId: null,
  openerTabId: null,
  partitionKind: 'shared',
  partitionLabel: 'Shared',
  hue: null,
  heldByPerson: false,
  heldBy: null,
  loaded: true,
};
const EVERY_VIEW_FEATURE = [CAPABILITY.view, CAPABILITY.viewCursor, CAPABILITY.viewClipboard, CAPABILITY.viewContextMenu, CAPABILITY.viewViewport, CAPABILITY.viewTake];

class FakeChannel extends EventTarget {
  readyState: RTCDataChannelState = 'open';
  readonly sent: unknown[] = [];

  constructor(readonly label: string) {
    super();
  }

  send(data: string) {
    this.sent.push(JSON.parse(data));
  }

  close() {
    this.readyState = 'closed';
  }
}

/** A connection whose live views and route calls are recorded. */
function fakeConnection(answers: Record<string, unknown> = {}) {
  const channels: FakeChannel[] = [];
  const calls: Array<[string, unknown]> = [];
  const connection = {
    createChannel(label: string) {
      const channel = new FakeChannel(label);
      channels.push(channel);
      return channel;
    },
    call: vi.fn(async (route: string, args: unknown) => {
      calls.push([route, args]);
      return answers[route] ?? {};
    }),
    onEvent: () => () => {},
  } as unknown as HostConnection;
  return { connection, channels, calls };
}

let container: HTMLElement;

beforeEach(() => {
  container = document.createElement('div');
  document.body.append(container);
  vi.stubGlobal(
    'ResizeObserver',
    class {
      observe() {}
      disconnect() {}
    },
  );
});

afterEach(() => {
  render(null, container);
  container.remove();
  vi.unstubAllGlobals();
});

async function showView(served: string[]) {
  const fake = fakeConnection();
  await act(async () => {
    render(<LiveView connection={fake.connection} tab={TAB} features={viewFeatures(new Set(served))} meId="me" names={new Map()} onBack={() => {}} onOpened={() => {}} />, container);
  });
  return fake;
}

function buttonNames(): string[] {
  return [...container.querySelectorAll('button')].map((b) => b.getAttribute('aria-label') ?? b.textContent?.trim() ?? '');
}

describe('viewFeatures', () => {
  it('reads each live-view feature from the host’s capabilities, none without the view itself', () => {
    expect(viewFeatures(new Set(EVERY_VIEW_FEATURE))).toEqual({ view: true, cursor: true, clipboard: true, menu: true, viewport: true, take: true });
    expect(viewFeatures(new Set([CAPABILITY.view]))).toEqual({ view: true, cursor: false, clipboard: false, menu: false, viewport: false, take: false });
    expect(viewFeatures(new Set(EVERY_VIEW_FEATURE.slice(1)))).toEqual({ view: false, cursor: false, clipboard: false, menu: false, viewport: false, take: false });
  });
});

describe('LiveView on a host lacking a capability', () => {
  it('opens no view and offers no control without browser-view, but keeps the tab’s controls', async () => {
    const { channels } = await showView([CAPABILITY.browserControl]);
    expect(channels).toEqual([]);
    expect(container.textContent).toContain('This host does not serve live views.');
    expect(buttonNames()).not.toContain('Take control');
    expect(buttonNames()).toEqual(expect.arrayContaining(['Back', 'Forward', 'Reload', 'Close tab']));
    expect(container.querySelector('input[aria-label="Address"]')).not.toBeNull();
  });

  it('asks only for the options the host serves', async () => {
    const every = await showView(EVERY_VIEW_FEATURE);
    expect(every.channels.map((c) => c.label)).toEqual([`view:${TAB.id}?cursor=1&menu=1`]);
    render(null, container);
    const bare = await showView([CAPABILITY.view]);
    expect(bare.channels.map((c) => c.label)).toEqual([`view:${TAB.id}`]);
  });

  it('hides copy and paste while holding a tab on a host without browser-view-clipboard', async () => {
    for (const [served, shown] of [
      [EVERY_VIEW_FEATURE, true],
      [EVERY_VIEW_FEATURE.filter((c) => c !== CAPABILITY.viewClipboard), false],
    ] as const) {
      render(null, container);
      const { channels } = await showView([...served]);
      await act(async () => {
        channels[0]!.dispatchEvent(new MessageEvent('message', { data: '{"type":"held","byYou":true}' }));
      });
      expect(buttonNames().includes('Copy'), served.join()).toBe(shown);
      expect(buttonNames().includes('Paste'), served.join()).toBe(shown);
    }
  });

  it('sends what a person typed to the host to resolve, as typed', async () => {
    const { connection } = await showView([CAPABILITY.view]);
    const input = container.querySelector<HTMLInputElement>('input[aria-label="Address"]')!;
    await act(async () => {
      input.value = ' 127.0.0.1:8080/page ';
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await act(async () => {
      input.form!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    });
    expect(connection.call).toHaveBeenCalledWith('browser-control-v1/navigate', { tabId: TAB.id, url: '127.0.0.1:8080/page' });
  });
});

describe('TabList', () => {
  it('shows the page title over its address, and opens a new tab in the chosen profile', async () => {
    const profile = { id: `profile-${'a'.repeat(32)}`, name: 'Work', hue: 204 };
    const { connection, calls } = fakeConnection({
      'browser-profiles-v1/list': { profiles: [profile] },
      'browser-control-v1/new_tab': { ...TAB, id: 'new' },
    });
    const onSelect = vi.fn();
    await act(async () => {
      render(<TabList connection={connection} tabs={[TAB]} error={null} selected={null} profilesServed meId="me" names={new Map()} agentNames={new Map()} onSelect={onSelect} />, container);
    });
    await act(async () => {}); // the profiles' answer
    const row = container.querySelector('.tab-row')!;
    expect(row.querySelector('.tab-row-title')!.textContent).toBe('Page');
    expect(row.querySelector('.tab-row-address')!.textContent).toBe('127.0.0.1:8080/page');
    const select = container.querySelector<HTMLSelectElement>('select[aria-label="Profile of the new tab"]')!;
    expect([...select.options].map((o) => o.textContent)).toEqual(['Shared', 'Work', 'Private sign-in']);
    await act(async () => {
      select.value = profile.id;
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await act(async () => {
      container.querySelector<HTMLButtonElement>('.new-tab button')!.click();
    });
    expect(calls.at(-1)).toEqual(['browser-control-v1/new_tab', { url: 'about:blank', profileId: profile.id, private: false }]);
    expect(onSelect).toHaveBeenCalledWith('new');
    await act(async () => {
      select.value = 'private-sign-in';
      select.dispatchEvent(new Event('change', { bubbles: true }));
    });
    await act(async () => {
      container.querySelector<HTMLButtonElement>('.new-tab button')!.click();
    });
    expect(calls.at(-1)).toEqual(['browser-control-v1/new_tab', { url: 'about:blank', profileId: null, private: true }]);
  });

  it('offers only Shared and a private sign-in on a host without browser profiles', async () => {
    const { connection, calls } = fakeConnection();
    await act(async () => {
      render(<TabList connection={connection} tabs={[]} error={null} selected={null} profilesServed={false} meId="me" names={new Map()} agentNames={new Map()} onSelect={() => {}} />, container);
    });
    const select = container.querySelector<HTMLSelectElement>('select')!;
    expect([...select.options].map((o) => o.textContent)).toEqual(['Shared', 'Private sign-in']);
    expect(calls.map(([route]) => route)).not.toContain('browser-profiles-v1/list');
  });
});
