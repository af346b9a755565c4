/**
 * Control of a tab between people, as the web client shows it: who holds a tab (by name),
 * the hint a watcher's click shows, asking the holder for control, and the holder's
 * requests to grant or dismiss.
 */
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LiveView } from '../src/components/host/LiveView';
import { TabList } from '../src/components/host/TabList';
import type { HostConnection } from '../src/host/connection';
import { controlRequestsAfter, heldText, waiting } from '../src/host/control-requests';
import { CAPABILITY, EVENT, viewFeatures, type TabView, type TeamApiEvent } from '../src/host/protocol';

const ME = 'a'.repeat(32);
const MAYA = 'b'.repeat(32);
const SAM = 'c'.repeat(32);
const NAMES = new Map([
  [ME, 'Tess'],
  [MAYA, 'Maya'],
  [SAM, 'Sam'],
]);
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
const HELD_BY_MAYA: TabView = { ...TAB, heldByPerson: true, heldBy: MAYA };
const FEATURES = viewFeatures(new Set([CAPABILITY.view]));

class FakeChannel extends EventTarget {
  readyState: RTCDataChannelState = 'open';
  readonly sent: Array<Record<string, unknown>> = [];

  constructor(readonly label: string) {
    super();
  }

  send(data: string) {
    this.sent.push(JSON.parse(data));
  }

  close() {
    this.readyState = 'closed';
  }

  /** A host message, or a frame of 640×400 (the view goes live once one is drawn). */
  receive(message: object | 'frame') {
    if (message !== 'frame') {
      this.dispatchEvent(new MessageEvent('message', { data: JSON.stringify(message) }));
      return;
    }
    const frame = new ArrayBuffer(20);
    const view = new DataView(frame);
    view.setUint8(0, 1);
    view.setUint16(6, 640);
    view.setUint16(8, 400);
    this.dispatchEvent(new MessageEvent('message', { data: frame }));
  }
}

function fakeConnection(answers: Record<string, unknown> = {}) {
  const channels: FakeChannel[] = [];
  const calls: Array<[string, unknown]> = [];
  const listeners = new Set<(event: TeamApiEvent) => void>();
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
    onEvent(listener: (event: TeamApiEvent) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  } as unknown as HostConnection;
  const emit = (event: TeamApiEvent) => act(() => listeners.forEach((listener) => listener(event)));
  return { connection, channels, calls, emit };
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
  vi.stubGlobal('createImageBitmap', async () => ({ close() {} }));
  // jsdom draws nothing: the view only needs to know a frame was decoded.
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue(null);
});

afterEach(() => {
  render(null, container);
  container.remove();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

async function showLive(tab: TabView, fake: ReturnType<typeof fakeConnection>) {
  await act(async () => {
    render(<LiveView connection={fake.connection} tab={tab} features={FEATURES} meId={ME} names={NAMES} onBack={() => {}} onOpened={() => {}} />, container);
  });
  await act(async () => fake.channels[0]!.receive('frame'));
  await act(async () => {}); // the frame is drawn
  expect(container.querySelector('[data-view-state="live"]')).not.toBeNull();
}

function button(name: string): HTMLButtonElement | undefined {
  return [...container.querySelectorAll<HTMLButtonElement>('button')].find((b) => b.textContent?.trim() === name);
}

async function clickView() {
  await act(async () => {
    container.querySelector('canvas')!.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, button: 0 }));
  });
}

describe('who holds a tab', () => {
  it('is named for everyone else, and is “you” for the holder', () => {
    expect(heldText(TAB, ME, NAMES)).toBeNull();
    expect(heldText(HELD_BY_MAYA, ME, NAMES)).toBe('Maya is in control');
    expect(heldText({ heldByPerson: true, heldBy: ME }, ME, NAMES)).toBe('You are in control');
    expect(heldText({ heldByPerson: true, heldBy: 'd'.repeat(32) }, ME, NAMES)).toBe('Another member is in control');
  });

  it('shows in the tab list', async () => {
    const { connection } = fakeConnection();
    await act(async () => {
      render(<TabList connection={connection} tabs={[HELD_BY_MAYA]} error={null} selected={null} profilesServed={false} meId={ME} names={NAMES} agentNames={new Map()} onSelect={() => {}} />, container);
    });
    expect(container.querySelector('.tab-row .tag')!.textContent).toBe('Maya is in control');
  });
});

describe('requests for control', () => {
  it('come with the host’s event, end with its resolution, and lapse on this clock', () => {
    const requested = { event: EVENT.controlRequested, data: { id: 'r1', tabId: TAB.id, accountId: SAM, expiresAt: 5, expiresIn: 60 } };
    const shown = controlRequestsAfter([], requested, 1_000);
    expect(shown).toEqual([{ id: 'r1', tabId: TAB.id, accountId: SAM, deadline: 61_000 }]);
    expect(controlRequestsAfter(shown, requested, 2_000)).toHaveLength(1);
    expect(controlRequestsAfter(shown, { event: EVENT.controlRequestResolved, data: { id: 'r1', tabId: TAB.id, outcome: 'dismissed' } }, 2_000)).toEqual([]);
    expect(controlRequestsAfter(shown, { event: EVENT.tabsChanged, data: {} }, 2_000)).toBe(shown);
    expect(waiting(shown, 60_999)).toBe(shown);
    expect(waiting(shown, 61_000)).toEqual([]);
  });
});

describe('the live view', () => {
  it('tells a watcher who clicks a free tab to take control', async () => {
    const fake = fakeConnection();
    await showLive(TAB, fake);
    expect(container.querySelector('.view-hint')).toBeNull();
    await clickView();
    const hint = container.querySelector('.view-hint')!;
    expect(hint.textContent).toContain('You’re watching. Take control to click and type.');
    await act(async () => hint.querySelector('button')!.click());
    expect(fake.channels[0]!.sent.at(-1)).toEqual({ type: 'take' });
    expect(container.querySelector('.view-hint')).toBeNull();
    // No input reached the page while watching.
    expect(fake.channels[0]!.sent.filter((m) => m.type === 'pointer' && m.action === 'down')).toEqual([]);
  });

  it('names the holder, and asks them for control until they answer', async () => {
    const fake = fakeConnection({
      'browser-control-v1/request_control': { id: 'r1', tabId: TAB.id, accountId: ME, holder: MAYA, expiresAt: 5, expiresIn: 60 },
    });
    await showLive(HELD_BY_MAYA, fake);
    expect(container.querySelector('.view-holder')!.textContent).toBe('Maya is in control');
    expect(button('Take control')).toBeUndefined();
    await clickView();
    expect(container.querySelector('.view-hint')!.textContent).toContain('Maya is in control: ask for control to click and type.');

    await act(async () => button('Ask for control')!.click());
    expect(fake.calls.at(-1)).toEqual(['browser-control-v1/request_control', { tabId: TAB.id }]);
    expect(container.querySelector('.view-hint')!.textContent).toContain('You asked Maya for control; waiting for an answer.');
    expect(button('Withdraw request')!.disabled).toBe(false);

    await fake.emit({ event: EVENT.controlRequestResolved, data: { id: 'r1', tabId: TAB.id, accountId: ME, outcome: 'dismissed' } });
    expect(container.querySelector('.view-notice')!.textContent).toContain('Your request for control was turned down.');
    expect(button('Ask for control')!.disabled).toBe(false);

    // Asked again, the member takes it back.
    await act(async () => button('Ask for control')!.click());
    await act(async () => button('Withdraw request')!.click());
    expect(fake.calls.at(-1)).toEqual(['browser-control-v1/withdraw_control_request', { requestId: 'r1' }]);
    expect(container.querySelector('.view-notice')!.textContent).toContain('You withdrew your request for control.');
    expect(button('Ask for control')!.disabled).toBe(false);
  });

  it('shows the holder who asks, to give control or dismiss', async () => {
    const fake = fakeConnection();
    await showLive({ ...TAB, heldByPerson: true, heldBy: ME }, fake);
    await act(async () => fake.channels[0]!.receive({ type: 'held', byYou: true }));
    await fake.emit({ event: EVENT.controlRequested, data: { id: 'r1', tabId: TAB.id, accountId: SAM, expiresAt: 5, expiresIn: 60 } });
    await fake.emit({ event: EVENT.controlRequested, data: { id: 'r2', tabId: 'another-tab', accountId: MAYA, expiresAt: 5, expiresIn: 60 } });
    const requests = container.querySelectorAll('.control-request');
    expect([...requests].map((r) => r.textContent)).toEqual(['Sam asks for control of this tab.Give controlDismiss']);

    await act(async () => button('Give control')!.click());
    expect(fake.calls.at(-1)).toEqual(['browser-control-v1/grant_control', { requestId: 'r1' }]);
    expect(container.querySelector('.control-request')).toBeNull();

    await fake.emit({ event: EVENT.controlRequested, data: { id: 'r3', tabId: TAB.id, accountId: MAYA, expiresAt: 5, expiresIn: 60 } });
    await act(async () => container.querySelector<HTMLButtonElement>('.control-request .btn-ghost')!.click());
    expect(fake.calls.at(-1)).toEqual(['browser-control-v1/dismiss_control_request', { requestId: 'r3' }]);
  });

  it('drops a request nobody answered once it lapses', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const fake = fakeConnection();
    await showLive({ ...TAB, heldByPerson: true, heldBy: ME }, fake);
    await act(async () => fake.channels[0]!.receive({ type: 'held', byYou: true }));
    await fake.emit({ event: EVENT.controlRequested, data: { id: 'r1', tabId: TAB.id, accountId: SAM, expiresAt: 5, expiresIn: 60 } });
    expect(container.querySelector('.control-request')).not.toBeNull();
    await act(async () => {
      vi.advanceTimersByTime(60_000);
    });
    expect(container.querySelector('.control-request')).toBeNull();
  });
});

describe('a tab in secure entry', () => {
  const TAKE_FEATURES = viewFeatures(new Set([CAPABILITY.view, CAPABILITY.viewTake]));

  async function refuse(fake: ReturnType<typeof fakeConnection>, index: number) {
    await act(async () => {
      fake.channels[index]!.receive({ type: 'closed', code: 'tabHoldsSecret', reason: 'in secure entry' });
      fake.channels[index]!.dispatchEvent(new Event('close'));
    });
  }

  it('opens holding the tab for the person answering a takeover request', async () => {
    const fake = fakeConnection();
    await act(async () => {
      render(<LiveView connection={fake.connection} tab={TAB} features={TAKE_FEATURES} meId={ME} names={NAMES} takeOnOpen onBack={() => {}} onOpened={() => {}} />, container);
    });
    expect(fake.channels[0]!.label).toBe(`view:${TAB.id}?take=1`);
  });

  it('offers a watcher refused during entry to take the tab over, and reopens holding it', async () => {
    const fake = fakeConnection();
    await act(async () => {
      render(<LiveView connection={fake.connection} tab={TAB} features={TAKE_FEATURES} meId={ME} names={NAMES} onBack={() => {}} onOpened={() => {}} />, container);
    });
    expect(fake.channels[0]!.label).toBe(`view:${TAB.id}`);
    await refuse(fake, 0);
    await act(async () => button('Take over')!.click());
    expect(fake.channels).toHaveLength(2);
    expect(fake.channels[1]!.label).toBe(`view:${TAB.id}?take=1`);
    // Refused again (someone else holds it): nothing more to offer than watching again.
    await refuse(fake, 1);
    expect(button('Take over')).toBeUndefined();
    expect(button('Watch again')).toBeDefined();
  });

  it('offers no takeover on a host that cannot open a view holding the tab', async () => {
    const fake = fakeConnection();
    await showLive(TAB, fake);
    await refuse(fake, 0);
    expect(button('Take over')).toBeUndefined();
  });
});

describe('a view that ends', () => {
  it('says why in plain words, clears the last frame and can be watched again', async () => {
    const fake = fakeConnection();
    const clear = vi.fn();
    await showLive(TAB, fake);
    vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue({ clearRect: clear } as unknown as CanvasRenderingContext2D);
    await act(async () => {
      fake.channels[0]!.receive({ type: 'closed', code: 'tabHoldsSecret', reason: 'in secure entry' });
      fake.channels[0]!.dispatchEvent(new Event('close'));
    });
    const overlay = container.querySelector('.view-overlay')!;
    expect(overlay.textContent).toContain('The view ended. A secret (such as a password) is being entered into this tab');
    expect(clear).toHaveBeenCalled();
    expect(container.querySelector('[data-view-state="closed"]')).not.toBeNull();

    await act(async () => button('Watch again')!.click());
    expect(fake.channels).toHaveLength(2);
    expect(fake.channels[0]!.readyState).toBe('closed');
    expect(container.querySelector('[data-view-state="opening"]')).not.toBeNull();
    expect(button('Watch again')).toBeUndefined();
  });
});
