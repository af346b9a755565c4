/**
 * The bell in the host screen's header: the member's unread count on this host; a click
 * opens the list, and an item opens its thread at the card (and is marked read). While the
 * page is hidden a new notification also shows as a browser notification, if the member
 * allowed them: the permission is asked only when they click "Allow browser notifications".
 * The open list takes focus on its heading; Escape or a press outside closes it and gives
 * focus back to the bell.
 */

import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { badgeText, EMPTY, itemOf, LIST_LIMIT, markedRead, notificationsAfterEvent, offersBrowserPermission, showsInBrowser, type NotificationAdded, type NotificationItem, type NotificationState } from '../../host/notifications';
import { EVENT } from '../../host/protocol';
import { Banner } from '../Banner';
import { Icon } from '../Icon';

function permissionNow(): NotificationPermission | 'unsupported' {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

export function NotificationBell({ connection, onOpenThread }: { connection: HostConnection; onOpenThread: (item: NotificationItem) => void }) {
  const [state, setState] = useState<NotificationState>(EMPTY);
  const [served, setServed] = useState(true);
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [permission, setPermission] = useState(permissionNow);
  // A browser notification's click opens what the bell would, with the screen's latest handler.
  const opening = useRef<(item: NotificationItem) => void>(() => {});
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    let current = true;
    connection.call('notifications-v1/list', { limit: LIST_LIMIT }).then(
      (page) => current && setState({ items: page.notifications, unread: page.unread }),
      // A host without notifications-v1 shows no bell.
      () => current && setServed(false),
    );
    const off = connection.onEvent((event) => {
      setState((old) => notificationsAfterEvent(old, event));
      if (event.event === EVENT.notificationCreated && showsInBrowser(document.hidden, permissionNow())) {
        const data = event.data as NotificationAdded;
        const shown = new Notification(data.title, { body: data.body, tag: data.id });
        shown.onclick = () => {
          window.focus();
          shown.close();
          void opening.current(itemOf(data));
        };
      }
    });
    return () => {
      current = false;
      off();
    };
  }, [connection]);

  // Listened for only while the list is open, so a closed bell costs the page nothing.
  useEffect(() => {
    if (!open) return;
    heading.current?.focus();
    const close = () => {
      setOpen(false);
      button.current?.focus();
    };
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return;
      event.preventDefault();
      close();
    };
    const onPointerDown = (event: PointerEvent) => {
      if (event.target instanceof Node && root.current?.contains(event.target)) return;
      close();
    };
    document.addEventListener('keydown', onKeyDown);
    document.addEventListener('pointerdown', onPointerDown);
    return () => {
      document.removeEventListener('keydown', onKeyDown);
      document.removeEventListener('pointerdown', onPointerDown);
    };
  }, [open]);

  if (!served) return null;
  const count = badgeText(state.unread);

  const openItem = async (item: NotificationItem) => {
    setOpen(false);
    if (item.threadId !== null) onOpenThread(item);
    if (item.readAt !== null) return;
    try {
      const { unread } = await connection.call('notifications-v1/mark_read', { id: item.id });
      setState((old) => markedRead(old, item.id, unread, Date.now() / 1000));
    } catch (failure) {
      setError(failure);
    }
  };
  opening.current = (item) => void openItem(item);
  const markAll = async () => {
    try {
      await connection.call('notifications-v1/mark_all_read', {});
      setState((old) => notificationsAfterEvent(old, { event: EVENT.notificationsRead, data: { unread: 0 } }));
    } catch (failure) {
      setError(failure);
    }
  };
  const allow = async () => {
    // Asked only here, on the member's click.
    setPermission(await Notification.requestPermission());
  };

  return (
    <div class="bell" ref={root}>
      <button
        ref={button}
        type="button"
        class="btn btn-ghost btn-icon bell-button"
        aria-expanded={open}
        aria-label={state.unread ? `Notifications, ${state.unread} unread` : 'Notifications'}
        data-unread={state.unread}
        onClick={() => setOpen(!open)}
      >
        <Icon name="bell" size={20} />
        {count ? (
          <span class="bell-count" aria-hidden="true">
            {count}
          </span>
        ) : null}
      </button>
      {open ? (
        <div class="bell-panel card" role="dialog" aria-labelledby="bell-heading">
          <div class="bell-panel-head">
            <h2 id="bell-heading" class="bell-heading" tabIndex={-1} ref={heading}>
              Notifications
            </h2>
            {state.unread ? (
              <button type="button" class="btn btn-ghost btn-sm" onClick={() => void markAll()}>
                Mark all read
              </button>
            ) : null}
          </div>
          {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
          {offersBrowserPermission(permission) ? (
            <button type="button" class="btn btn-secondary btn-sm" onClick={() => void allow()}>
              Allow browser notifications
            </button>
          ) : null}
          {state.items.length === 0 ? (
            <p class="empty">Nothing yet. You are told here when an agent needs you or a run you follow ends.</p>
          ) : (
            <ul class="bell-list">
              {state.items.map((item) => (
                <li key={item.id}>
                  <button type="button" class={`bell-item${item.readAt === null ? ' bell-unread' : ''}`} data-kind={item.kind} onClick={() => void openItem(item)}>
                    <span class="bell-title">{item.title}</span>
                    <span class="bell-body">{item.body}</span>
                    <time class="admin-muted">{new Date(item.createdAt * 1000).toLocaleString()}</time>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      ) : null}
    </div>
  );
}
