/** The view channel's messages and the view's geometry, with a stand-in data channel. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fitBox } from '../src/components/host/LiveView';
import { tabHeading, tabTitle } from '../src/components/host/TabList';
import type { HostConnection } from '../src/host/connection';
import { CLOSE_REASON_WAIT_MS, LiveViewChannel } from '../src/host/live-view';
import type { Frame, HostViewMessage } from '../src/host/protocol';

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
    this.dispatchEvent(new Event('close'));
  }
}

function openView() {
  let channel: FakeChannel | null = null;
  const connection = {
    createChannel(label: string) {
      channel = new FakeChannel(label);
      return channel;
    },
  } as unknown as HostConnection;
  const seen = { frames: [] as Frame[], messages: [] as HostViewMessage[], closed: [] as Array<[string | null, string | null]> };
  const view = new LiveViewChannel(connection, { tabId: '0f8fad5b-d9cb-469f-a165-70867728950e', cursor: true, viewport: { width: 800, height: 600 } }, {
    frame: (frame) => seen.frames.push(frame),
    message: (message) => seen.messages.push(message),
    closed: (code, reason) => seen.closed.push([code, reason]),
  });
  return { view, channel: channel! as FakeChannel, seen };
}

describe('LiveViewChannel', () => {
  it('opens the labelled channel and sends the host’s message shapes', () => {
    const { view, channel } = openView();
    expect(channel.label).toBe('view:0f8fad5b-d9cb-469f-a165-70867728950e?cursor=1&viewport=800x600');
    view.take();
    view.pointer('down', 1.4, -0.2, { button: 'left', clickCount: 1 });
    view.key('down', 'a', { code: 'KeyA', text: 'a' });
    view.resize(90, 5000);
    view.choose(3, 'copy-link');
    view.clipboard('select-all');
    expect(channel.sent).toEqual([
      { type: 'take' },
      { type: 'pointer', action: 'down', x: 1, y: 0, button: 'left', clickCount: 1 },
      { type: 'key', action: 'down', key: 'a', code: 'KeyA', text: 'a' },
      { type: 'viewport', width: 200, height: 4096 },
      { type: 'menu-choice', menuId: 3, item: 'copy-link', text: '' },
      { type: 'select-all' },
    ]);
  });

  it('hands frames and messages on, and closes with the host’s reason', () => {
    const { channel, seen } = openView();
    const frame = new ArrayBuffer(20);
    new DataView(frame).setUint8(0, 1);
    new DataView(frame).setUint16(6, 640);
    channel.dispatchEvent(new MessageEvent('message', { data: frame }));
    channel.dispatchEvent(new MessageEvent('message', { data: new ArrayBuffer(3) })); // unreadable: skipped
    channel.dispatchEvent(new MessageEvent('message', { data: '{"type":"cursor","cursor":"pointer"}' }));
    channel.dispatchEvent(new MessageEvent('message', { data: '{"type":"closed","code":"tabHoldsSecret","reason":"the tab holds a secret"}' }));
    // The host's reason read, the client ends the channel itself.
    expect(channel.readyState).toBe('closed');
    expect(seen.frames.map((f) => f.width)).toEqual([640]);
    expect(seen.messages.map((m) => m.type)).toEqual(['cursor', 'closed']);
    expect(seen.closed).toEqual([['tabHoldsSecret', 'the tab holds a secret']]);
  });

  describe('when the close event comes before the host’s closed message', () => {
    afterEach(() => {
      vi.useRealTimers();
    });
    const CLOSED = '{"type":"closed","code":"tabHoldsSecret","reason":"the tab holds a secret"}';

    it('waits for the reason and reports the close once, with it', () => {
      vi.useFakeTimers();
      const { channel, seen } = openView();
      channel.close();
      expect(seen.closed).toEqual([]);
      channel.dispatchEvent(new MessageEvent('message', { data: CLOSED }));
      expect(seen.closed).toEqual([['tabHoldsSecret', 'the tab holds a secret']]);
      vi.advanceTimersByTime(CLOSE_REASON_WAIT_MS * 2);
      expect(seen.closed).toEqual([['tabHoldsSecret', 'the tab holds a secret']]);
    });

    it('reports a close without a reason after the wait, and the reason when it comes later', () => {
      vi.useFakeTimers();
      const { channel, seen } = openView();
      channel.close();
      vi.advanceTimersByTime(CLOSE_REASON_WAIT_MS);
      expect(seen.closed).toEqual([[null, null]]);
      channel.dispatchEvent(new MessageEvent('message', { data: CLOSED }));
      expect(seen.closed).toEqual([[null, null], ['tabHoldsSecret', 'the tab holds a secret']]);
    });

    it('reports a close this side made at once', () => {
      vi.useFakeTimers();
      const { view, seen } = openView();
      view.close();
      expect(seen.closed).toEqual([[null, null]]);
      vi.advanceTimersByTime(CLOSE_REASON_WAIT_MS * 2);
      expect(seen.closed).toEqual([[null, null]]);
    });
  });
});

describe('view geometry and addresses', () => {
  it('fits the frame in the panel without changing its shape', () => {
    expect(fitBox({ width: 1000, height: 400 }, { width: 1280, height: 800 })).toEqual({ width: 640, height: 400 });
    expect(fitBox({ width: 390, height: 600 }, { width: 390, height: 600 })).toEqual({ width: 390, height: 600 });
    expect(fitBox({ width: 500, height: 300 }, { width: 0, height: 0 })).toEqual({ width: 500, height: 300 });
  });

  it('leads a tab with its page title, else its short address', () => {
    expect(tabHeading({ title: 'Checkout', url: 'https://shop.example.com/cart' })).toBe('Checkout');
    expect(tabHeading({ title: '  ', url: 'https://shop.example.com/cart' })).toBe('shop.example.com/cart');
    expect(tabTitle('https://shop.example.com/cart?x=1')).toBe('shop.example.com/cart');
    expect(tabTitle('about:blank')).toBe('New tab');
  });
});
