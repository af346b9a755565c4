/** The vault screen: the mask keeps a secret, a save sends only changes, members read names and kinds. */
import { act } from 'preact/test-utils';
import { describe, expect, it } from 'vitest';
import { VAULT_MEMBER_REASON, VaultAdmin } from '../src/components/host/VaultAdmin';
import { button, fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';
import { SECRET_MASK, createBody, deleteItemQuestion, editForm, itemFacts, secretMarks, updateBody, withoutSecrets, type VaultItem } from '../src/host/vault-form';

const LOGIN: VaultItem = {
  id: 'item-1',
  kind: 'login',
  name: 'Shop',
  sites: ['https://shop.example'],
  username: 'ada',
  notes: null,
  cardholder: null,
  expiry: null,
  billingAddress: null,
  cardLast4: null,
  cardBrand: null,
  email: null,
  phone: null,
  postalAddress: null,
  passwordSet: true,
  totpSecretSet: false,
  numberSet: false,
  securityCodeSet: false,
  createdAt: 1,
  updatedAt: 1,
};
const CARD: VaultItem = { ...LOGIN, id: 'item-2', kind: 'card', name: 'Team card', sites: [], username: null, passwordSet: false, cardholder: 'Ada L', expiry: '12/29', cardLast4: '4242', cardBrand: 'visa', numberSet: true, securityCodeSet: true };

describe('vault forms', () => {
  it('opens an edit form with the mask for each secret the item holds', () => {
    const form = editForm(LOGIN);
    expect(form).toMatchObject({ name: 'Shop', sites: 'https://shop.example', username: 'ada', password: SECRET_MASK, totpSecret: '', notes: '' });
  });

  it('keeps a secret left as the mask, clears an emptied one and sends a typed one', () => {
    const form = editForm(LOGIN);
    expect(updateBody(LOGIN, form)).toEqual({ itemId: 'item-1' });
    expect(updateBody(LOGIN, { ...form, username: 'ada2' })).toEqual({ itemId: 'item-1', username: 'ada2' });
    expect(updateBody(LOGIN, { ...form, password: '' })).toEqual({ itemId: 'item-1', password: null });
    expect(updateBody(LOGIN, { ...form, password: 'n3w pass' })).toEqual({ itemId: 'item-1', password: 'n3w pass' });
    // A secret that was never set and stays empty is not sent at all.
    expect(updateBody(LOGIN, { ...form, totpSecret: '' })).toEqual({ itemId: 'item-1' });
    expect(updateBody(LOGIN, { ...form, notes: 'x', sites: 'https://shop.example\nhttps://b.example' })).toEqual({
      itemId: 'item-1',
      notes: 'x',
      sites: ['https://shop.example', 'https://b.example'],
    });
    expect(updateBody(LOGIN, { ...form, username: '' })).toEqual({ itemId: 'item-1', username: null });
  });

  it('adds an item with the fields filled in only', () => {
    expect(createBody('login', { name: ' Bank ', sites: 'https://bank.example, https://m.bank.example', username: '', password: 'pw', totpSecret: '', notes: '' })).toEqual({
      item: { kind: 'login', name: 'Bank', sites: ['https://bank.example', 'https://m.bank.example'], password: 'pw' },
    });
    expect(createBody('contact', { name: 'Me', email: 'me@example.com', phone: '', postalAddress: '' })).toEqual({ item: { kind: 'contact', name: 'Me', email: 'me@example.com' } });
  });

  it('drops typed secrets from the form once a save starts', () => {
    expect(withoutSecrets('login', { ...editForm(LOGIN), password: 'typed', totpSecret: 'JBSW' }, LOGIN)).toMatchObject({ password: SECRET_MASK, totpSecret: '' });
    expect(withoutSecrets('card', { name: 'c', number: '4242424242424242', securityCode: '123' }, null)).toMatchObject({ number: '', securityCode: '' });
  });

  it('shows a card’s brand and last four and the set marks, never more', () => {
    expect(itemFacts(CARD)).toEqual(['Visa ending 4242', 'expires 12/29']);
    expect(secretMarks(CARD)).toEqual(['Card number set', 'Security code set']);
    expect(secretMarks(LOGIN)).toEqual(['Password set']);
    expect(deleteItemQuestion('Shop')).toBe('Delete “Shop” from the vault? Agents can no longer use it.');
  });
});

const mount = mountPoint();

describe('VaultAdmin', () => {
  it('shows members names and kinds only, with the reason, and no controls', async () => {
    const { connection, calls } = fakeConnection({ 'vault-v1/list_names': { items: [{ id: 'item-1', kind: 'login', name: 'Shop', sites: ['https://shop.example'] }], total: 1, nextOffset: null } });
    await show(<VaultAdmin connection={connection} role="member" />, mount.element);
    const container = mount.element;
    expect(calls.map(([route]) => route)).toEqual(['vault-v1/list_names']);
    expect(container.textContent).toContain(VAULT_MEMBER_REASON);
    expect(container.querySelector('[data-vault-item="item-1"]')!.textContent).toBe('ShopLogin');
    expect(container.querySelectorAll('button, input, select, textarea')).toHaveLength(0);
  });

  it('edits with the mask: a save that keeps it sends no password, and the typed one leaves the input', async () => {
    const { connection, calls } = fakeConnection({ 'vault-v1/list': { items: [LOGIN], total: 1, nextOffset: null } });
    await show(<VaultAdmin connection={connection} role="admin" />, mount.element);
    const container = mount.element;
    const row = container.querySelector('[data-vault-item="item-1"]')!;
    expect(row.textContent).toContain('Password set');
    await act(async () => button(row, 'Edit').click());
    const password = row.querySelector<HTMLInputElement>('input[type="password"]')!;
    expect(password.value).toBe(SECRET_MASK);
    const user = [...row.querySelectorAll<HTMLInputElement>('input[type="text"]')].find((i) => i.value === 'ada')!;
    await typeInto(user, 'ada.l');
    await submit(row.querySelector('form')!);
    expect(calls.at(-2)).toEqual(['vault-v1/update', { itemId: 'item-1', username: 'ada.l' }]);

    await act(async () => button(row, 'Edit').click());
    const again = row.querySelector<HTMLInputElement>('input[type="password"]')!;
    await typeInto(again, 'typed-secret-1');
    await submit(row.querySelector('form')!);
    expect(calls.some(([route, args]) => route === 'vault-v1/update' && (args as { password?: string }).password === 'typed-secret-1')).toBe(true);
    expect(container.innerHTML).not.toContain('typed-secret-1');
  });

  it('asks before a delete, naming the item', async () => {
    const { connection, calls } = fakeConnection({ 'vault-v1/list': { items: [CARD], total: 1, nextOffset: null } });
    await show(<VaultAdmin connection={connection} role="owner" />, mount.element);
    const container = mount.element;
    await act(async () => button(container, 'Delete').click());
    expect(container.querySelector('[role="group"]')!.getAttribute('aria-label')).toBe(deleteItemQuestion('Team card'));
    expect(calls.map(([route]) => route)).not.toContain('vault-v1/delete');
    await act(async () => {
      container.querySelector<HTMLButtonElement>('.btn-danger-solid')!.click();
    });
    expect(calls).toContainEqual(['vault-v1/delete', { itemId: 'item-2' }]);
  });
});
