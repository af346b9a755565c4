/** The bell's list: new ones on top once, read marks from elsewhere, and when the browser is told. */
import { describe, expect, it } from 'vitest';
import { badgeText, EMPTY, markedRead, notificationsAfterEvent, offersBrowserPermission, preferencesBody, showsInBrowser } from '../src/host/notifications';

const ID = 'a'.repeat(32);

function created(id: string, unread: number) {
  return {
    event: 'notification-created',
    data: { id, kind: 'approval', title: 'Waiting for your approval', body: 'Click “Pay”', agentId: 'b'.repeat(32), threadId: 'c'.repeat(32), requestId: null, createdAt: 1, unread },
  };
}

describe('notifications', () => {
  it('puts a new one on top once and takes the count from the host', () => {
    const one = notificationsAfterEvent(EMPTY, created(ID, 1));
    expect(one.items.map((n) => n.id)).toEqual([ID]);
    expect(one.unread).toBe(1);
    const two = notificationsAfterEvent(one, created('d'.repeat(32), 2));
    expect(two.items.map((n) => n.id)).toEqual(['d'.repeat(32), ID]);
    expect(notificationsAfterEvent(two, created(ID, 2)).items).toHaveLength(2);
    expect(notificationsAfterEvent(two, { event: 'turn-text', data: {} })).toBe(two);
  });

  it('marks read here and follows read marks made elsewhere', () => {
    const one = notificationsAfterEvent(EMPTY, created(ID, 1));
    const read = markedRead(one, ID, 0, 5);
    expect(read.items[0]?.readAt).toBe(5);
    expect(read.unread).toBe(0);
    const elsewhere = notificationsAfterEvent(one, { event: 'notifications-read', data: { unread: 0 } });
    expect(elsewhere.items[0]?.readAt).not.toBeNull();
    expect(elsewhere.unread).toBe(0);
  });

  it('tells the browser only while hidden and allowed, and offers to ask only before a choice', () => {
    expect(showsInBrowser(true, 'granted')).toBe(true);
    expect(showsInBrowser(false, 'granted')).toBe(false);
    expect(showsInBrowser(true, 'default')).toBe(false);
    expect(showsInBrowser(true, 'unsupported')).toBe(false);
    expect(offersBrowserPermission('default')).toBe(true);
    expect(offersBrowserPermission('denied')).toBe(false);
    expect(offersBrowserPermission('unsupported')).toBe(false);
  });

  it('shows the count and sends an empty address as none', () => {
    expect(badgeText(0)).toBe('');
    expect(badgeText(7)).toBe('7');
    expect(badgeText(120)).toBe('99+');
    const form = { email: '  ', approval: 'digest', question: 'off', runFinished: 'off', runFailed: 'immediately' } as const;
    expect(preferencesBody(form).email).toBeNull();
    expect(preferencesBody({ ...form, email: ' ana@example.com ' }).email).toBe('ana@example.com');
  });
});
