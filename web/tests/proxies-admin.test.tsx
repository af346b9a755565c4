/** The proxies screen: keepPassword and previousAddress bodies, the questions, a stale save, members' view. */
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { describe, expect, it } from 'vitest';
import { ProfilesPanel } from '../src/components/host/ProfilesPanel';
import { PROXY_MEMBER_REASON, ProxiesAdmin } from '../src/components/host/ProxiesAdmin';
import type { TabView } from '../src/host/protocol';
import { button, fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';
import { PASSWORD_MASK, closeTabsQuestion, deleteProxyQuestion, hostOf, saveEdit, startEdit, statusText, tabsOfProfiles, withPassword, type ProxyView } from '../src/host/proxy-form';

const WORK = { id: `profile-${'a'.repeat(32)}`, name: 'Work', hue: 204 };
const SHOP = { id: `profile-${'b'.repeat(32)}`, name: 'Shop', hue: 4 };
const PROXY: ProxyView = {
  id: `proxy-${'c'.repeat(32)}`,
  kind: 'address',
  name: 'proxy.example',
  address: 'http://me@proxy.example:3128',
  password: PASSWORD_MASK,
  memberId: null,
  profiles: [WORK.id, SHOP.id],
  status: null,
};
const COMPUTER: ProxyView = { ...PROXY, id: `proxy-${'d'.repeat(32)}`, kind: 'computer', name: 'computer: Maya’s laptop', address: null, password: null, memberId: 'm', profiles: [], status: 'offline' };

function tab(label: string, kind = 'profile'): TabView {
  return { id: label + Math.random(), url: 'https://a.example/', title: 'A', icon: null, ownerAgentId: null, openerTabId: null, partitionKind: kind, partitionLabel: label, hue: null, heldByPerson: false, heldBy: null, loaded: true };
}
const TABS = [tab('Work'), tab('Work'), tab('Shop'), tab('Shared', 'shared')];

describe('proxy edits', () => {
  it('keeps the password while the mask stays, and says which address the form opened with', () => {
    const edit = startEdit(PROXY);
    expect(edit).toEqual({ address: 'http://me@proxy.example:3128', password: PASSWORD_MASK });
    expect(saveEdit(PROXY, edit)).toEqual({ kind: 'nothing' });
    expect(saveEdit(PROXY, { ...edit, address: 'http://me@proxy.example:3129' })).toEqual({
      kind: 'update',
      body: { id: PROXY.id, previousAddress: 'http://me@proxy.example:3128', address: 'http://me@proxy.example:3129', keepPassword: true },
    });
  });

  it('asks for the password again when the proxy moves to another host', () => {
    const edit = startEdit(PROXY);
    const moved = saveEdit(PROXY, { ...edit, address: 'http://me@elsewhere.example:3128' });
    expect(moved.kind).toBe('refused');
    expect(saveEdit(PROXY, { ...edit, address: 'http://me@PROXY.example.:3129' }).kind).toBe('update');
    expect(hostOf('socks5://u@[2001:db8::1]:1080')).toBe('2001:db8::1');
  });

  it('removes an emptied password and puts a typed one into the address', () => {
    const edit = startEdit(PROXY);
    expect(saveEdit(PROXY, { ...edit, password: '' })).toEqual({
      kind: 'update',
      body: { id: PROXY.id, previousAddress: PROXY.address, address: PROXY.address, keepPassword: false },
    });
    expect(saveEdit(PROXY, { ...edit, password: 'p@ss:/#' })).toEqual({
      kind: 'update',
      body: { id: PROXY.id, previousAddress: PROXY.address, address: 'http://me:p@ss:/#@proxy.example:3128', keepPassword: false },
    });
    const bare = { ...PROXY, address: 'http://proxy.example:3128', password: null };
    expect(saveEdit(bare, startEdit(bare))).toEqual({ kind: 'nothing' });
    expect(saveEdit(bare, { address: 'http://proxy.example:3128', password: 'pw' }).kind).toBe('refused');
  });

  it('gives each address form its password', () => {
    expect(withPassword('socks5://me:old@h.example:1080', 'new')).toBe('socks5://me:new@h.example:1080');
    expect(withPassword('me@h.example:3128', 'new')).toBe('me:new@h.example:3128');
    expect(withPassword('h.example:3128:me', 'new')).toBe('http://me:new@h.example:3128');
    expect(withPassword('h.example:3128:me:old', 'new')).toBe('http://me:new@h.example:3128');
    expect(withPassword('http://h.example:3128', 'new')).toBeNull();
    expect(withPassword('h.example:3128', 'new')).toBeNull();
  });

  it('counts the open tabs a change closes and words the questions', () => {
    expect(tabsOfProfiles(TABS, ['Work'])).toBe(2);
    expect(tabsOfProfiles(TABS, ['Work', 'Shop'])).toBe(3);
    expect(tabsOfProfiles(TABS, ['Shared'])).toBe(0);
    expect(closeTabsQuestion(0)).toBeNull();
    expect(closeTabsQuestion(1)).toBe('Close 1 open tab? The change closes the tabs of the profiles it affects.');
    expect(deleteProxyQuestion('proxy.example', [], 0)).toBe('Delete the proxy proxy.example?');
    expect(deleteProxyQuestion('proxy.example', ['Work'], 0)).toBe('Delete the proxy proxy.example? The profile Work moves to Automatic.');
    expect(deleteProxyQuestion('proxy.example', ['Work'], 1)).toBe('Delete the proxy proxy.example? The profile Work moves to Automatic, and 1 open tab closes.');
    expect(deleteProxyQuestion('proxy.example', ['Work', 'Shop', 'Home'], 3)).toBe(
      'Delete the proxy proxy.example? The profiles Work, Shop and Home move to Automatic, and 3 open tabs close.',
    );
  });

  it('marks a proxy that does not answer or refuses its sign-in, and a computer online or offline', () => {
    expect(statusText({ ...PROXY, status: 'unreachable' })?.text).toBe('Not answering');
    expect(statusText({ ...PROXY, status: 'signIn' })?.text).toBe('Sign-in refused');
    expect(statusText(PROXY)).toBeNull();
    expect(statusText(COMPUTER)?.text).toBe('Offline');
    expect(statusText({ ...COMPUTER, status: null })?.text).toBe('Online');
  });
});

const mount = mountPoint();

const ANSWERS = {
  'browser-proxies-v1/list': { proxies: [PROXY, COMPUTER] },
  'browser-profiles-v1/list': { profiles: [WORK, SHOP] },
};

describe('ProxiesAdmin', () => {
  it('asks before a delete, naming the profiles it moves, and sends the profiles it named', async () => {
    const { connection, calls } = fakeConnection(ANSWERS);
    await show(<ProxiesAdmin connection={connection} role="admin" tabs={TABS} />, mount.element);
    const row = mount.element.querySelector(`[data-proxy="${PROXY.id}"]`)!;
    expect(row.textContent).toContain('Used by Work, Shop');
    expect(mount.element.querySelector(`[data-proxy="${COMPUTER.id}"] [data-status="offline"]`)!.textContent).toBe('Offline');
    await act(async () => button(row, 'Delete').click());
    const question = row.querySelector('[role="group"]')!;
    expect(question.getAttribute('aria-label')).toBe('Delete the proxy proxy.example? The profiles Work and Shop move to Automatic, and 3 open tabs close.');
    await act(async () => button(question, 'Delete').click());
    expect(calls).toContainEqual(['browser-proxies-v1/delete', { id: PROXY.id, profiles: [WORK.id, SHOP.id] }]);
  });

  it('asks "close N open tabs?" before a save that closes them, then sends keepPassword and previousAddress', async () => {
    const { connection, calls } = fakeConnection(ANSWERS);
    await show(<ProxiesAdmin connection={connection} role="owner" tabs={TABS} />, mount.element);
    const row = mount.element.querySelector(`[data-proxy="${PROXY.id}"]`)!;
    await act(async () => button(row, 'Edit').click());
    const [address, password] = [...row.querySelectorAll<HTMLInputElement>('form input')];
    expect(password!.type).toBe('password');
    expect(password!.value).toBe(PASSWORD_MASK);
    await typeInto(address!, 'http://me@proxy.example:8080');
    await submit(row.querySelector('form')!);
    expect(calls.map(([route]) => route)).not.toContain('browser-proxies-v1/update');
    const question = row.querySelector('[role="group"]')!;
    expect(question.textContent).toContain('Close 3 open tabs?');
    await act(async () => button(question, 'Close tabs and save').click());
    expect(calls).toContainEqual([
      'browser-proxies-v1/update',
      { id: PROXY.id, previousAddress: 'http://me@proxy.example:3128', address: 'http://me@proxy.example:8080', keepPassword: true },
    ]);
  });

  it('says someone else changed the proxy and loads it again when the host refuses a stale save', async () => {
    const { connection, calls } = fakeConnection(
      { ...ANSWERS, 'browser-proxies-v1/list': { proxies: [{ ...PROXY, profiles: [] }] } },
      { 'browser-proxies-v1/update': 'browserProxyChanged' },
    );
    await show(<ProxiesAdmin connection={connection} role="admin" tabs={[]} />, mount.element);
    const row = mount.element.querySelector(`[data-proxy="${PROXY.id}"]`)!;
    await act(async () => button(row, 'Edit').click());
    const password = row.querySelectorAll<HTMLInputElement>('form input')[1]!;
    await typeInto(password, 'typed-proxy-secret');
    const listed = calls.filter(([route]) => route === 'browser-proxies-v1/list').length;
    await submit(row.querySelector('form')!);
    await act(async () => {});
    expect(calls.find(([route]) => route === 'browser-proxies-v1/update')![1]).toMatchObject({ address: 'http://me:typed-proxy-secret@proxy.example:3128', keepPassword: false });
    expect(mount.element.textContent).toContain('Someone else changed this proxy meanwhile.');
    expect(calls.filter(([route]) => route === 'browser-proxies-v1/list').length).toBe(listed + 1);
    expect(mount.element.querySelector('form[aria-label^="Edit"]')).toBeNull();
    expect(mount.element.innerHTML).not.toContain('typed-proxy-secret');
  });

  it('shows members each profile’s proxy, with the reason, and no controls', async () => {
    const { connection, calls } = fakeConnection({
      'browser-proxies-v1/profile_proxies': { profiles: [{ profileId: WORK.id, proxyName: 'proxy.example' }] },
      'browser-profiles-v1/list': { profiles: [WORK, SHOP] },
    });
    await show(<ProxiesAdmin connection={connection} role="member" tabs={TABS} />, mount.element);
    expect(calls.map(([route]) => route)).not.toContain('browser-proxies-v1/list');
    expect(mount.element.textContent).toContain(PROXY_MEMBER_REASON);
    expect([...mount.element.querySelectorAll('.admin-row')].map((r) => r.textContent)).toEqual(['Workproxy.example', 'ShopAutomatic']);
    expect(mount.element.querySelectorAll('button, input, select')).toHaveLength(0);
  });
});

describe('the Proxy choice of a profile', () => {
  it('asks before closing the profile’s tabs, then assigns; without tabs it assigns at once', async () => {
    const { connection, calls } = fakeConnection(ANSWERS);
    await show(<ProfilesPanel connection={connection} canManage proxiesServed tabs={TABS} />, mount.element);
    const work = mount.element.querySelector<HTMLSelectElement>(`#proxy-${WORK.id}`)!;
    expect([...work.options].map((o) => o.textContent)).toEqual(['Automatic', 'proxy.example', 'computer: Maya’s laptop']);
    expect(work.value).toBe(PROXY.id);
    await typeInto(work, '', 'change');
    expect(calls.map(([route]) => route)).not.toContain('browser-proxies-v1/assign');
    const question = mount.element.querySelector('[role="group"]')!;
    expect(question.textContent).toContain('Close 2 open tabs?');
    await act(async () => button(question, 'Close tabs and change').click());
    expect(calls).toContainEqual(['browser-proxies-v1/assign', { profile: WORK.id, proxyId: null }]);

    render(null, mount.element);
    await show(<ProfilesPanel connection={connection} canManage proxiesServed tabs={[]} />, mount.element);
    const shop = mount.element.querySelector<HTMLSelectElement>(`#proxy-${SHOP.id}`)!;
    await typeInto(shop, COMPUTER.id, 'change');
    expect(calls.at(-2)).toEqual(['browser-proxies-v1/assign', { profile: SHOP.id, proxyId: COMPUTER.id }]);
  });

  it('offers no choice on a host without proxies', async () => {
    const { connection, calls } = fakeConnection(ANSWERS);
    await show(<ProfilesPanel connection={connection} canManage tabs={TABS} />, mount.element);
    expect(mount.element.querySelector('.proxy-select')).toBeNull();
    expect(calls.map(([route]) => route)).toEqual(['browser-profiles-v1/list']);
  });
});
