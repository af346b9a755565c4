/**
 * The bell as a member uses it: the unread count from the host, a new notification arriving,
 * a click on an item opening its thread and marking it read, and the browser's permission
 * asked only on the member's click, never when the page loads.
 */
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NotificationBell } from '../src/components/host/NotificationBell';
import type { HostConnection } from '../src/host/connection';
import type { NotificationItem } from '../src/host/notifications';
import type { TeamApiEvent } from '../src/host/protocol';

const ID = 'a'.repeat(32);
const AGENT = 'b'.repeat(32);
const THREAD = 'c'.repeat(32);
const ITEM: NotificationItem = {
  id: ID,
  kind: 'approval',
  title: 'Waiting for your approval',
  body: 'Click “Pay now” on Shop (shop.test)',
  agentId: AGENT,
  threadId: THREAD,
  requestId: 'd'.repeat(32),
  routineId: null,
  runId: null,
  createdAt: 1_700_000_000,
  readAt: null,
};

function fakeConnection(answers: Record<string, unknown>) {
  const calls: Array<[string, unknown]> = [];
  const listeners = new Set<(event: TeamApiEvent) => void>();
  const connection = {
    call: vi.fn(async (route: string, args: unknown) => {
      calls.push([route, args]);
      if (answers[route] instanceof Error) throw answers[route];
      return answers[route] ?? {};
    }),
    onEvent(listener: (event: TeamApiEvent) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  } as unknown as HostConnection;
  const emit = (event: TeamApiEvent) => act(() => listeners.forEach((listener) => listener(event)));
  return { connection, calls, emit };
}

class FakeNotification {
  static permission: NotificationPermission = 'default';
  static requestPermission = vi.fn(async () => {
    FakeNotification.permission = 'granted';
    return 'granted' as NotificationPermission;
  });
  static shown: Array<{ title: string; body: string | undefined }> = [];
  static made: FakeNotification[] = [];
  onclick: (() => void) | null = null;
  constructor(title: string, options: NotificationOptions) {
    FakeNotification.shown.push({ title, body: options.body });
    FakeNotification.made.push(this);
  }
  close() {}
}

let container: HTMLElement;
let hidden = false;

beforeEach(() => {
  container = document.createElement('div');
  document.body.append(container);
  FakeNotification.permission = 'default';
  FakeNotification.shown = [];
  FakeNotification.made = [];
  FakeNotification.requestPermission.mockClear();
  vi.stubGlobal('Notification', FakeNotification);
  hidden = false;
  vi.spyOn(document, 'hidden', 'get').mockImplementation(() => hidden);
});

afterEach(() => {
  render(null, container);
  container.remove();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function button(name: string): HTMLButtonElement | undefined {
  return [...container.querySelectorAll<HTMLButtonElement>('button')].find((b) => b.textContent?.includes(name));
}

async function show(fake: ReturnType<typeof fakeConnection>, onOpenThread = vi.fn()) {
  await act(async () => {
    render(<NotificationBell connection={fake.connection} onOpenThread={onOpenThread} />, container);
  });
  await act(async () => {}); // the list has loaded
  return onOpenThread;
}

function bell(): HTMLButtonElement {
  return container.querySelector<HTMLButtonElement>('.bell-button')!;
}

describe('the notification bell', () => {
  it('shows the unread count and never asks for the permission on load', async () => {
    const fake = fakeConnection({ 'notifications-v1/list': { notifications: [ITEM], unread: 1 } });
    await show(fake);
    expect(bell().dataset.unread).toBe('1');
    expect(bell().textContent).toContain('1');
    expect(FakeNotification.requestPermission).not.toHaveBeenCalled();
  });

  it('opens an item’s thread at its card and marks it read', async () => {
    const fake = fakeConnection({ 'notifications-v1/list': { notifications: [ITEM], unread: 1 }, 'notifications-v1/mark_read': { unread: 0 } });
    const opened = await show(fake);
    await act(async () => bell().click());
    const item = container.querySelector<HTMLButtonElement>('.bell-item')!;
    expect(item.textContent).toContain('Click “Pay now” on Shop (shop.test)');
    await act(async () => item.click());
    expect(opened).toHaveBeenCalledWith(expect.objectContaining({ agentId: AGENT, threadId: THREAD }));
    expect(fake.calls).toContainEqual(['notifications-v1/mark_read', { id: ID }]);
    expect(bell().dataset.unread).toBe('0');
  });

  it('counts a new one, and tells the browser only when hidden and allowed on a click', async () => {
    const fake = fakeConnection({ 'notifications-v1/list': { notifications: [], unread: 0 }, 'notifications-v1/mark_read': { unread: 1 } });
    const opened = await show(fake);
    const created = (id: string, unread: number): TeamApiEvent => ({
      event: 'notification-created',
      data: { ...ITEM, id, unread },
    });
    hidden = true;
    fake.emit(created('e'.repeat(32), 1));
    expect(bell().dataset.unread).toBe('1');
    expect(FakeNotification.shown).toEqual([]); // not allowed yet
    await act(async () => bell().click());
    await act(async () => button('Allow browser notifications')!.click());
    expect(FakeNotification.requestPermission).toHaveBeenCalledTimes(1);
    expect(button('Allow browser notifications')).toBeUndefined();
    fake.emit(created('f'.repeat(32), 2));
    expect(FakeNotification.shown).toEqual([{ title: ITEM.title, body: ITEM.body }]);
    // Its click brings the page back at the thread, and marks it read.
    await act(async () => FakeNotification.made[0]!.onclick!());
    expect(opened).toHaveBeenCalledWith(expect.objectContaining({ id: 'f'.repeat(32), threadId: THREAD }));
    expect(fake.calls).toContainEqual(['notifications-v1/mark_read', { id: 'f'.repeat(32) }]);
    hidden = false;
    fake.emit(created('9'.repeat(32), 3));
    expect(FakeNotification.shown).toHaveLength(1); // a visible page shows the bell only
  });

  it('marks all read, and shows nothing on a host without notifications', async () => {
    const fake = fakeConnection({ 'notifications-v1/list': { notifications: [ITEM], unread: 1 } });
    await show(fake);
    await act(async () => bell().click());
    await act(async () => button('Mark all read')!.click());
    expect(fake.calls).toContainEqual(['notifications-v1/mark_all_read', {}]);
    expect(bell().dataset.unread).toBe('0');
    render(null, container);
    const bare = fakeConnection({ 'notifications-v1/list': new Error('routeUnknown') });
    await show(bare);
    expect(container.querySelector('.bell')).toBeNull();
  });

  it('takes focus on its heading, and closes on Escape or a press outside, giving focus back', async () => {
    const fake = fakeConnection({ 'notifications-v1/list': { notifications: [ITEM], unread: 1 } });
    await show(fake);
    const panel = () => container.querySelector('.bell-panel');
    await act(async () => bell().click());
    expect(document.activeElement).toBe(container.querySelector('.bell-heading'));
    await act(async () => {
      document.activeElement!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(panel()).toBeNull();
    expect(document.activeElement).toBe(bell());

    await act(async () => bell().click());
    // A press inside the list keeps it open; one anywhere else closes it.
    await act(async () => {
      panel()!.dispatchEvent(new Event('pointerdown', { bubbles: true }));
    });
    expect(panel()).not.toBeNull();
    await act(async () => {
      document.body.dispatchEvent(new Event('pointerdown', { bubbles: true }));
    });
    expect(panel()).toBeNull();
    expect(document.activeElement).toBe(bell());
    expect(bell().getAttribute('aria-expanded')).toBe('false');
  });
});
