/**
 * One `view:<tabId>` channel: frames in (binary), take control, input, clipboard, context
 * menu and viewport out. The message shapes are the host's (see `protocol.ts`).
 */

import type { HostConnection } from './connection';
import { clampSide, decodeFrame, parseHostViewMessage, viewLabel, type Frame, type HostViewMessage, type MenuItem, type ViewMessage, type ViewOptions } from './protocol';

export interface ViewListeners {
  frame(frame: Frame): void;
  message(message: HostViewMessage): void;
  /** The channel closed; `code` and `reason` come from the host's `closed` message if it sent one. */
  closed(code: string | null, reason: string | null): void;
}

/** The most UTF-16 units one `text` message carries (the host's `MAX_TYPED_TEXT`). */
export const MAX_TYPED_TEXT = 4096;

export type PointerAction = 'move' | 'down' | 'up' | 'wheel';
export type PointerButton = 'none' | 'left' | 'middle' | 'right';

/**
 * How long a close without the host's reason waits for its `closed` message. The host
 * sends the message before it closes the channel, but the browser may report the close
 * first; the reason still wins when it comes within this time, or later.
 */
export const CLOSE_REASON_WAIT_MS = 500;

export class LiveViewChannel {
  private readonly channel: RTCDataChannel;
  private closedWith: { code: string; reason: string } | null = null;
  // Whether this side closed the channel, and whether the close event came.
  private closedHere = false;
  private closeSeen = false;
  private reasonWait: ReturnType<typeof setTimeout> | undefined;

  constructor(
    connection: HostConnection,
    options: ViewOptions,
    private readonly listeners: ViewListeners,
  ) {
    this.channel = connection.createChannel(viewLabel(options));
    this.channel.addEventListener('message', (event: MessageEvent) => this.onMessage(event.data));
    this.channel.addEventListener('close', () => this.onClose());
  }

  get open(): boolean {
    return this.channel.readyState === 'open';
  }

  send(message: ViewMessage): void {
    if (this.channel.readyState === 'open') this.channel.send(JSON.stringify(message));
  }

  take(): void {
    this.send({ type: 'take' });
  }

  release(): void {
    this.send({ type: 'release' });
  }

  /** `x` and `y` are fractions of the frame (0 to 1). */
  pointer(action: PointerAction, x: number, y: number, extra: { button?: PointerButton; clickCount?: number; modifiers?: number; deltaX?: number; deltaY?: number } = {}): void {
    this.send({ type: 'pointer', action, x: clamp01(x), y: clamp01(y), ...extra });
  }

  key(action: 'down' | 'up' | 'char', key: string, extra: { code?: string; text?: string; modifiers?: number; repeat?: boolean } = {}): void {
    this.send({ type: 'key', action, key: key.slice(0, 32), ...extra });
  }

  /** Text typed without a key of its own (a composition, an emoji), inserted whole. */
  text(text: string): void {
    for (const part of textParts(text)) this.send({ type: 'text', text: part });
  }

  paste(text: string): void {
    this.send({ type: 'paste', text });
  }

  clipboard(action: 'copy' | 'cut' | 'select-all'): void {
    this.send({ type: action });
  }

  choose(menuId: number, item: MenuItem, text = ''): void {
    this.send({ type: 'menu-choice', menuId, item, text });
  }

  resize(width: number, height: number): void {
    this.send({ type: 'viewport', width: clampSide(width), height: clampSide(height) });
  }

  /** Closes the channel from this side: reported at once, with no reason to wait for. */
  close(): void {
    this.closedHere = true;
    this.channel.close();
  }

  private onClose(): void {
    if (this.closeSeen) return;
    this.closeSeen = true;
    if (this.closedHere || this.closedWith) this.reportClosed();
    else this.reasonWait = setTimeout(() => this.reportClosed(), CLOSE_REASON_WAIT_MS);
  }

  /** Tells the listeners; again when the host's reason comes after a close reported without it. */
  private reportClosed(): void {
    clearTimeout(this.reasonWait);
    this.reasonWait = undefined;
    this.listeners.closed(this.closedWith?.code ?? null, this.closedWith?.reason ?? null);
  }

  private onMessage(data: unknown): void {
    if (data instanceof ArrayBuffer) {
      try {
        this.listeners.frame(decodeFrame(data));
      } catch {
        // A frame this client cannot read is skipped; the next one replaces it anyway.
      }
      return;
    }
    if (typeof data !== 'string') return;
    const message = parseHostViewMessage(data);
    if (!message) return;
    if (message.type !== 'closed') {
      this.listeners.message(message);
      return;
    }
    const late = this.closeSeen && !this.closedWith;
    this.closedWith = { code: message.code, reason: message.reason };
    this.listeners.message(message);
    // The close came first: the reason still wins, whether or not the wait is over.
    if (late) this.reportClosed();
    // The host said why, and this side ends the channel: a view refused as it opens
    // waits for that, so that the reason is read before the close.
    else this.channel.close();
  }
}

function clamp01(value: number): number {
  return Math.max(0, Math.min(1, value));
}

/** `text` in parts the host takes, never splitting a surrogate pair. */
export function textParts(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + MAX_TYPED_TEXT);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}
