/**
 * A live view of one tab: frames drawn on a canvas that fills the panel and keeps the
 * page's aspect ratio; the page's viewport follows the panel. Watching needs nothing;
 * pointer, wheel, keys and the clipboard go to the page only while this member holds it.
 * Keys are read by an invisible text area over the view, so compositions (IME, dead keys,
 * emoji, a phone's keyboard) and the browser's own paste reach it; notices float over the
 * view without changing its size, so the page's viewport stays put.
 * A watcher who clicks the view is told how to steer: take control, or ask the person who
 * holds the tab for it; the holder sees such requests over the view and grants or dismisses.
 * What the host does not serve (per `capabilities`) is not offered.
 */

import { useEffect, useRef, useState } from 'preact/hooks';
import { describeCode, describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { controlRequestsAfter, heldText, holderName, waiting, type ControlRequest, type MemberNames } from '../../host/control-requests';
import { ClickCounter } from '../../host/click-count';
import { composing, inputAction, keyDownAction } from '../../host/key-input';
import { LiveViewChannel, type PointerButton } from '../../host/live-view';
import { EVENT, MAX_CLIPBOARD, modifierBits, type ContextMenu, type Frame, type MenuItem, type TabView, type ViewFeatures } from '../../host/protocol';
import { Icon } from '../Icon';
import { HolderBadge, IncomingRequests, WatchingHint } from './ControlOverlay';
import { ProfileChip, tabTitle } from './TabList';
import { TeachButtons, TeachOutcome, useTeaching } from './TeachTask';

type ViewState = 'opening' | 'live' | 'closed';

const BUTTONS: Record<number, PointerButton> = { 0: 'left', 1: 'middle', 2: 'right' };
const MENU_LABELS: Record<MenuItem, string> = {
  'open-link': 'Open link in new tab',
  'copy-link': 'Copy link address',
  copy: 'Copy',
  paste: 'Paste',
  'select-all': 'Select all',
  back: 'Back',
  forward: 'Forward',
  reload: 'Reload',
};
const RESIZE_DELAY_MS = 250;
const CSS_CURSOR = /^[a-z-]{1,24}$/;
const NOTHING_SELECTED = 'Nothing is selected on the page, so there is nothing to copy.';

/** The largest box of the frame's aspect ratio that fits the panel. */
export function fitBox(panel: { width: number; height: number }, frame: { width: number; height: number }) {
  if (!frame.width || !frame.height || !panel.width || !panel.height) return panel;
  const scale = Math.min(panel.width / frame.width, panel.height / frame.height);
  return { width: Math.floor(frame.width * scale), height: Math.floor(frame.height * scale) };
}

export function LiveView(props: {
  connection: HostConnection;
  tab: TabView;
  features: ViewFeatures;
  /** This member's account, and every member's name by account. */
  meId: string;
  names: MemberNames;
  onBack: () => void;
  onOpened: (tabId: string) => void;
  /** Open the view already holding the tab (the person answering an agent's takeover request). */
  takeOnOpen?: boolean;
  /** "Teach" on an agent's tab (`browser-teach-v1`): whose tab it is, and where its draft skill is reviewed. */
  teach?: { agentName: string; onReview: () => void } | null;
}) {
  const { connection, tab, features, meId, names } = props;
  const panel = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const keys = useRef<HTMLTextAreaElement>(null);
  const clicks = useRef(new ClickCounter());
  // The button a press on the canvas holds down, and the keys whose press went to the page.
  const pressed = useRef<number | null>(null);
  const keysDown = useRef(new Set<string>());
  const channel = useRef<LiveViewChannel | null>(null);
  const [viewState, setViewState] = useState<ViewState>('opening');
  const [frameSize, setFrameSize] = useState({ width: 0, height: 0 });
  const [panelSize, setPanelSize] = useState({ width: 0, height: 0 });
  const [holding, setHolding] = useState(false);
  const [closedReason, setClosedReason] = useState<string | null>(null);
  // Bumped by "Watch again": the channel opens anew (a tab in secure entry is refused until it loads a new page).
  const [attempt, setAttempt] = useState(0);
  // A tab in secure entry is refused to watchers; its one view is the person who takes it over.
  const [openHolding, setOpenHolding] = useState(Boolean(props.takeOnOpen) && features.take);
  const [closedCode, setClosedCode] = useState<string | null>(null);
  const [notice, setNotice] = useNotice();
  const [menu, setMenu] = useState<ContextMenu | null>(null);
  const [cursor, setCursor] = useState('default');
  const control = useControlRequests(connection, tab, meId, names, holding, setNotice);
  const teaching = useTeaching(connection, tab, holding, props.teach?.agentName ?? 'The agent');

  const focusView = () => keys.current?.focus({ preventScroll: true });

  // The channel, for as long as this tab is shown.
  useEffect(() => {
    if (!features.view) return undefined;
    setViewState('opening');
    setClosedReason(null);
    setClosedCode(null);
    const box = panel.current?.getBoundingClientRect();
    const viewport = features.viewport && box && box.width > 0 ? { width: box.width, height: box.height } : undefined;
    let drawing = false;
    let ended = false;
    let pending: Frame | null = null;
    const draw = async (frame: Frame) => {
      drawing = true;
      try {
        const bitmap = await createImageBitmap(new Blob([frame.jpeg as Uint8Array<ArrayBuffer>], { type: 'image/jpeg' }));
        const target = canvas.current;
        // A frame decoded after the view ended is dropped.
        if (target && !ended) {
          if (target.width !== frame.width || target.height !== frame.height) {
            target.width = frame.width;
            target.height = frame.height;
          }
          target.getContext('2d')?.drawImage(bitmap, 0, 0, frame.width, frame.height);
          setFrameSize((old) => (old.width === frame.width && old.height === frame.height ? old : { width: frame.width, height: frame.height }));
          setViewState('live');
        }
        bitmap.close();
      } catch {
        // An undecodable frame is skipped; the next one replaces it.
      } finally {
        drawing = false;
      }
      const next = pending;
      pending = null;
      if (next) void draw(next);
    };
    const view = new LiveViewChannel(connection, { tabId: tab.id, cursor: features.cursor, menu: features.menu, ...(viewport ? { viewport } : {}), ...(openHolding ? { take: true } : {}) }, {
      frame(frame) {
        // Only the newest frame waiting is drawn: a slow screen never builds a queue.
        if (drawing) pending = frame;
        else void draw(frame);
      },
      message(message) {
        switch (message.type) {
          case 'held':
            setHolding(message.byYou);
            break;
          case 'cursor':
            setCursor(CSS_CURSOR.test(message.cursor) ? message.cursor : 'default');
            break;
          case 'context-menu':
            setMenu(message);
            break;
          case 'copied':
            // Nothing selected: say so, and leave the clipboard as it was.
            if (message.text === '') setNotice(NOTHING_SELECTED);
            else void writeClipboard(message.text).then(setNotice);
            break;
          case 'copyTooLarge':
            setNotice('The selection is larger than 1 MiB, so it was not copied.');
            break;
          case 'opened':
            if (message.tabId !== tab.id) setNotice('The link opened in a new tab.');
            break;
          case 'error':
            setNotice(describeCode(message.code, 'host'));
            break;
          case 'closed':
            setClosedCode(message.code);
            setClosedReason(describeCode(message.code, 'host'));
            break;
        }
      },
      closed(code) {
        setViewState('closed');
        setHolding(false);
        if (code) {
          setClosedCode(code);
          setClosedReason(describeCode(code, 'host'));
        }
        // The last frame is not left under the notice as if it were the page now.
        ended = true;
        pending = null;
        const target = canvas.current;
        target?.getContext('2d')?.clearRect(0, 0, target.width, target.height);
      },
    });
    channel.current = view;
    return () => {
      ended = true;
      channel.current = null;
      view.close();
    };
  }, [connection, tab.id, attempt, openHolding]);

  // The page's viewport follows the panel (after the panel settles).
  useEffect(() => {
    const element = panel.current;
    if (!element) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const observer = new ResizeObserver(([entry]) => {
      if (!entry) return;
      const size = { width: Math.floor(entry.contentRect.width), height: Math.floor(entry.contentRect.height) };
      setPanelSize(size);
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (features.viewport && size.width > 0 && size.height > 0) channel.current?.resize(size.width, size.height);
      }, RESIZE_DELAY_MS);
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      clearTimeout(timer);
    };
  }, []);

  // Wheel needs a non-passive listener to keep the app's own page from scrolling.
  useEffect(() => {
    const target = canvas.current;
    if (!target) return undefined;
    const onWheel = (event: WheelEvent) => {
      if (!holding) return;
      event.preventDefault();
      const [x, y] = fraction(target, event);
      const scale = event.deltaMode === 1 ? 40 : event.deltaMode === 2 ? 800 : 1;
      channel.current?.pointer('wheel', x, y, { deltaX: event.deltaX * scale, deltaY: event.deltaY * scale, modifiers: modifierBits(event) });
    };
    target.addEventListener('wheel', onWheel, { passive: false });
    return () => target.removeEventListener('wheel', onWheel);
  }, [holding]);

  const step = async (route: 'browser-control-v1/back' | 'browser-control-v1/forward' | 'browser-control-v1/reload') => {
    try {
      await connection.call(route, { tabId: tab.id });
    } catch (error) {
      setNotice(describeError(error));
    }
  };
  const go = async (url: string) => {
    try {
      await connection.call('browser-control-v1/navigate', { tabId: tab.id, url });
    } catch (error) {
      setNotice(describeError(error));
    }
  };
  const closeTab = async () => {
    try {
      await connection.call('browser-control-v1/close_tab', { tabId: tab.id });
      props.onBack();
    } catch (error) {
      setNotice(describeError(error));
    }
  };
  const pasteFromClipboard = async (menuId?: number) => {
    let text: string;
    try {
      text = await navigator.clipboard.readText();
    } catch {
      setNotice('The browser did not allow reading the clipboard. Press Ctrl+V (⌘V) on the view instead.');
      return;
    }
    if (new TextEncoder().encode(text).length > MAX_CLIPBOARD) {
      setNotice('The clipboard holds more than 1 MiB, so it was not pasted.');
    } else if (menuId === undefined) channel.current?.paste(text);
    else channel.current?.choose(menuId, 'paste', text);
  };

  const send = (action: 'move' | 'down' | 'up', event: PointerEvent, pressedButton = event.button) => {
    const target = canvas.current;
    if (!target || viewState !== 'live') return;
    if (action !== 'move' && !holding) return;
    const [x, y] = fraction(target, event);
    const modifiers = modifierBits(event);
    if (action === 'move') {
      // The host knows which buttons a drag holds; a move carries only where, and modifiers.
      channel.current?.pointer('move', x, y, { modifiers });
      return;
    }
    const button = BUTTONS[pressedButton] ?? 'left';
    const clickCount = action === 'down' ? clicks.current.press(pressedButton, event.clientX, event.clientY, event.timeStamp) : clicks.current.release(pressedButton);
    pressed.current = action === 'down' ? pressedButton : null;
    channel.current?.pointer(action, x, y, { button, clickCount, modifiers });
  };

  // Text a composition or a phone's keyboard typed, which no key press carried.
  useEffect(() => {
    const area = keys.current;
    if (!area) return undefined;
    const onBeforeInput = (event: InputEvent) => {
      // A composition's text stays in the text area until it ends; a paste has its own event.
      if (event.isComposing || event.inputType === 'insertCompositionText' || event.inputType === 'insertFromPaste') return;
      event.preventDefault();
      const action = holding ? inputAction(event.inputType, event.data) : null;
      if (action?.kind === 'text') channel.current?.text(action.text);
      else if (action) {
        channel.current?.key('down', action.key, { code: action.code });
        channel.current?.key('up', action.key, { code: action.code });
      }
    };
    const onCompositionEnd = (event: CompositionEvent) => {
      if (holding && event.data) channel.current?.text(event.data);
      area.value = '';
    };
    area.addEventListener('beforeinput', onBeforeInput);
    area.addEventListener('compositionend', onCompositionEnd);
    return () => {
      area.removeEventListener('beforeinput', onBeforeInput);
      area.removeEventListener('compositionend', onCompositionEnd);
    };
  }, [holding]);

  const box = fitBox(panelSize, frameSize);
  const heldByOther = tab.heldByPerson && !holding;
  const holder = heldByOther && tab.heldBy !== meId ? holderName(tab.heldBy ?? '', names) : null;
  const take = () => {
    control.setHint(false);
    channel.current?.take();
    focusView();
  };
  return (
    <section class="live-view" aria-label={`Live view of ${tabTitle(tab.url)}`} data-view-state={viewState}>
      <div class="view-toolbar" role="toolbar" aria-label="Tab controls">
        <button type="button" class="btn btn-ghost btn-icon view-back" onClick={props.onBack} title="All tabs" aria-label="All tabs">
          <Icon name="menu" />
        </button>
        <button type="button" class="btn btn-ghost btn-icon" onClick={() => void step('browser-control-v1/back')} title="Back" aria-label="Back">
          <Icon name="back" />
        </button>
        <button type="button" class="btn btn-ghost btn-icon" onClick={() => void step('browser-control-v1/forward')} title="Forward" aria-label="Forward">
          <Icon name="forward" />
        </button>
        <button type="button" class="btn btn-ghost btn-icon" onClick={() => void step('browser-control-v1/reload')} title="Reload" aria-label="Reload">
          <Icon name="reload" />
        </button>
        <AddressBar url={tab.url} onGo={(address) => void go(address)} />
        <ProfileChip label={tab.partitionLabel} hue={tab.hue} />
        <span class="toolbar-gap" />
        {holding && features.clipboard ? (
          <>
            <button
              type="button"
              class="btn btn-ghost btn-icon"
              onClick={() => {
                channel.current?.clipboard('copy');
                focusView();
              }}
              title="Copy the page's selection to your clipboard"
              aria-label="Copy"
            >
              <Icon name="copy" />
            </button>
            <button
              type="button"
              class="btn btn-ghost btn-icon"
              onClick={() => {
                focusView();
                void pasteFromClipboard();
              }}
              title="Paste from your clipboard"
              aria-label="Paste"
            >
              <Icon name="paste" />
            </button>
          </>
        ) : null}
        {props.teach && tab.ownerAgentId && features.view && !holder ? <TeachButtons teaching={teaching} disabled={viewState !== 'live' || heldByOther} /> : null}
        {features.view && holder ? (
          <button
            type="button"
            class={`btn btn-sm ${control.asked ? 'btn-secondary' : 'btn-primary'}`}
            disabled={viewState !== 'live'}
            title={control.asked ? `Waiting for ${holder} to answer; click to withdraw` : `Ask ${holder} to pass you control`}
            onClick={() => void (control.asked ? control.withdraw() : control.ask())}
          >
            <Icon name="hand" size={16} />
            {control.asked ? 'Withdraw request' : 'Ask for control'}
          </button>
        ) : features.view ? (
          <button
            type="button"
            class={`btn btn-sm ${holding ? 'btn-secondary' : 'btn-primary'}`}
            disabled={viewState !== 'live' || heldByOther}
            title={heldByOther ? 'Another person has control of this tab' : undefined}
            onClick={() => {
              if (holding) {
                channel.current?.release();
                focusView();
              } else take();
            }}
          >
            <Icon name="hand" size={16} />
            {holding ? 'Release' : 'Take control'}
          </button>
        ) : null}
        <button type="button" class="btn btn-ghost btn-icon" onClick={() => void closeTab()} title="Close tab" aria-label="Close tab">
          <Icon name="close" />
        </button>
      </div>
      {props.teach ? <TeachOutcome teaching={teaching} onReview={props.teach.onReview} /> : null}
      <div class="view-panel" ref={panel}>
        <canvas
          ref={canvas}
          class={`view-canvas${holding ? ' is-holding' : ''}`}
          aria-label="Live view"
          data-frame-width={frameSize.width}
          data-frame-height={frameSize.height}
          style={{ width: `${box.width}px`, height: `${box.height}px`, cursor: holding ? cursor : 'default' }}
          onPointerMove={(event) => send('move', event)}
          onPointerDown={(event) => {
            setMenu(null);
            // A watcher's click does nothing on the page: say how to steer instead.
            if (!holding && viewState === 'live' && features.view) control.setHint(true);
            if (holding) {
              // A drag goes on reaching the page when the pointer leaves the view.
              event.currentTarget.setPointerCapture(event.pointerId);
              focusView();
            }
            send('down', event);
          }}
          onPointerUp={(event) => send('up', event)}
          onLostPointerCapture={(event) => {
            // The press ended with no release here (the window lost it): release it on the page.
            if (pressed.current !== null) send('up', event, pressed.current);
          }}
          // Keeps the keys' focus, and this page's own text selection, where they are.
          onMouseDown={(event) => event.preventDefault()}
          onContextMenu={(event) => event.preventDefault()}
        />
        <textarea
          ref={keys}
          class="view-keys"
          aria-label="Type into the page"
          autoComplete="off"
          autoCapitalize="off"
          spellcheck={false}
          tabIndex={holding ? 0 : -1}
          onKeyDown={(event) => {
            if (!holding) return;
            const action = keyDownAction(event);
            if (action.kind === 'browser') return;
            event.preventDefault();
            if (action.kind === 'key') {
              keysDown.current.add(action.code || action.key);
              channel.current?.key('down', action.key, { code: action.code, text: action.text, modifiers: action.modifiers, ...(action.repeat ? { repeat: true } : {}) });
            } else if (features.clipboard) channel.current?.clipboard(action.kind);
          }}
          onKeyUp={(event) => {
            if (!holding || composing(event)) return;
            event.preventDefault();
            // Only keys whose press reached the page (not Ctrl+C, say) are released there.
            if (keysDown.current.delete(event.code || event.key)) channel.current?.key('up', event.key, { code: event.code.slice(0, 32), modifiers: modifierBits(event) });
          }}
          onBlur={() => keysDown.current.clear()}
          onPaste={(event) => {
            event.preventDefault();
            if (!holding || !features.clipboard) return;
            const text = event.clipboardData?.getData('text/plain') ?? '';
            if (new TextEncoder().encode(text).length > MAX_CLIPBOARD) setNotice('The clipboard holds more than 1 MiB, so it was not pasted.');
            else if (text) channel.current?.paste(text);
          }}
          onCopy={(event) => {
            event.preventDefault();
            if (holding && features.clipboard) channel.current?.clipboard('copy');
          }}
          onCut={(event) => {
            event.preventDefault();
            if (holding && features.clipboard) channel.current?.clipboard('cut');
          }}
        />
        <div class="view-notices" role="status">
          {notice ? (
            <div
              key={notice.id}
              class="view-notice"
              // Fades by itself (held while pointed at or focused); its animation's end removes it.
              onAnimationEnd={(event) => event.target === event.currentTarget && setNotice(null)}
            >
              <span>{notice.text}</span>
              <button type="button" class="link-button" onClick={() => setNotice(null)}>
                Dismiss
              </button>
            </div>
          ) : null}
        </div>
        {holder ? <HolderBadge text={heldText(tab, meId, names) ?? `${holder} is in control`} /> : null}
        {control.hint && !holding && viewState === 'live' ? (
          <WatchingHint
            holder={holder}
            asked={control.asked !== null}
            onTake={take}
            onAsk={() => void control.ask()}
            onClose={() => control.setHint(false)}
          />
        ) : null}
        {holding ? <IncomingRequests requests={control.incoming} names={names} onGrant={(id) => void control.answer(id, true)} onDismiss={(id) => void control.answer(id, false)} /> : null}
        {!features.view ? <p class="view-overlay">This host does not serve live views.</p> : null}
        {features.view && viewState === 'opening' ? <p class="view-overlay">Opening the live view…</p> : null}
        {viewState === 'closed' ? (
          <div class="view-overlay">
            <p>{closedReason ? `The view ended. ${closedReason}` : 'The view ended.'}</p>
            <button type="button" class="btn btn-secondary btn-sm" onClick={() => setAttempt((n) => n + 1)}>
              Watch again
            </button>
            {closedCode === 'tabHoldsSecret' && features.take && !openHolding ? (
              <button type="button" class="btn btn-primary btn-sm" onClick={() => setOpenHolding(true)}>
                Take over
              </button>
            ) : null}
          </div>
        ) : null}
        {menu ? (
          <ul
            class="view-menu"
            role="menu"
            aria-label="Page menu"
            style={{ left: `calc(50% - ${box.width / 2}px + ${menu.x * box.width}px)`, top: `calc(50% - ${box.height / 2}px + ${menu.y * box.height}px)` }}
            onKeyDown={(event) => {
              if (event.key !== 'Escape') return;
              setMenu(null);
              focusView();
            }}
          >
            {menu.items.map((item) => (
              <li key={item} role="none">
                <button
                  type="button"
                  role="menuitem"
                  onClick={() => {
                    setMenu(null);
                    focusView();
                    if (item === 'paste') void pasteFromClipboard(menu.menuId);
                    else channel.current?.choose(menu.menuId, item);
                  }}
                >
                  {MENU_LABELS[item]}
                </button>
              </li>
            ))}
          </ul>
        ) : null}
      </div>
    </section>
  );
}

function AddressBar({ url, onGo }: { url: string; onGo: (url: string) => void }) {
  const [typed, setTyped] = useState<string | null>(null);
  return (
    <form
      class="view-address"
      onSubmit={(event) => {
        event.preventDefault();
        // The host resolves what was typed, as a browser's address bar would.
        if (typed?.trim()) onGo(typed.trim());
        setTyped(null);
        (document.activeElement as HTMLElement | null)?.blur();
      }}
    >
      <input
        aria-label="Address"
        value={typed ?? (url === 'about:blank' ? '' : url)}
        placeholder="Type an address"
        spellcheck={false}
        autoComplete="off"
        onInput={(event) => setTyped((event.target as HTMLInputElement).value)}
        onBlur={() => setTyped(null)}
        onKeyDown={(event) => event.key === 'Escape' && setTyped(null)}
      />
    </form>
  );
}

function fraction(target: HTMLElement, event: { clientX: number; clientY: number }): [number, number] {
  const rect = target.getBoundingClientRect();
  return [(event.clientX - rect.left) / Math.max(1, rect.width), (event.clientY - rect.top) / Math.max(1, rect.height)];
}

async function writeClipboard(text: string): Promise<string> {
  try {
    await navigator.clipboard.writeText(text);
    return 'Copied to your clipboard.';
  } catch {
    return 'The browser did not allow writing to the clipboard.';
  }
}

/** The notice over the view: set with its text, and a new one replaces it (and fades anew). */
function useNotice(): [{ id: number; text: string } | null, (text: string | null) => void] {
  const [notice, setShown] = useState<{ id: number; text: string } | null>(null);
  const ids = useRef(0);
  const set = (text: string | null) => setShown(text === null ? null : { id: ++ids.current, text });
  return [notice, set];
}

/**
 * Requests for control of this tab: the ones asking this member (while holding it) and this
 * member's own, with the hint a watcher's click shows. Each ends when the host says so, when
 * it lapses, or when control changes hands.
 */
function useControlRequests(
  connection: HostConnection,
  tab: TabView,
  meId: string,
  names: MemberNames,
  holding: boolean,
  setNotice: (text: string | null) => void,
) {
  const [hint, setHint] = useState(false);
  const [incoming, setIncoming] = useState<ControlRequest[]>([]);
  const [asked, setAsked] = useState<ControlRequest | null>(null);
  const askedId = useRef<string | null>(null);
  askedId.current = asked?.id ?? null;
  const holderNow = tab.heldBy;

  useEffect(
    () =>
      connection.onEvent((event) => {
        const data = event.data as { tabId?: unknown; id?: unknown; outcome?: unknown } | null;
        if (data?.tabId !== tab.id) return;
        setIncoming((old) => controlRequestsAfter(old, event, Date.now()));
        if (event.event !== EVENT.controlRequestResolved || data.id !== askedId.current) return;
        setAsked(null);
        if (data.outcome === 'dismissed') setNotice('Your request for control was turned down.');
        else if (data.outcome === 'expired') setNotice('Your request for control lapsed without an answer.');
      }),
    [connection, tab.id],
  );

  // Control changed hands: this member's request (to the previous holder) is moot.
  useEffect(() => {
    setAsked(null);
    if (holding) setHint(false);
  }, [holderNow, holding]);

  // Requests lapse on time even when no event says so.
  const next = Math.min(...incoming.map((r) => r.deadline), asked?.deadline ?? Infinity);
  useEffect(() => {
    if (next === Infinity) return undefined;
    const timer = setTimeout(() => {
      const now = Date.now();
      setIncoming((old) => waiting(old, now));
      setAsked((old) => (old && old.deadline <= now ? null : old));
    }, Math.max(0, next - Date.now()));
    return () => clearTimeout(timer);
  }, [next]);

  const ask = async () => {
    try {
      const request = await connection.call('browser-control-v1/request_control', { tabId: tab.id });
      setAsked({ id: request.id, tabId: request.tabId, accountId: meId, deadline: Date.now() + request.expiresIn * 1000 });
      setNotice(`You asked ${holderName(request.holder, names)} for control.`);
    } catch (error) {
      setNotice(describeError(error));
    }
  };
  const withdraw = async () => {
    const request = asked;
    if (request === null) return;
    setAsked(null);
    try {
      await connection.call('browser-control-v1/withdraw_control_request', { requestId: request.id });
      setNotice('You withdrew your request for control.');
    } catch (error) {
      setNotice(describeError(error));
    }
  };
  const answer = async (requestId: string, grant: boolean) => {
    setIncoming((old) => old.filter((r) => r.id !== requestId));
    try {
      await connection.call(grant ? 'browser-control-v1/grant_control' : 'browser-control-v1/dismiss_control_request', { requestId });
    } catch (error) {
      setNotice(describeError(error));
    }
  };
  return { hint, setHint, incoming, asked, ask, withdraw, answer };
}
