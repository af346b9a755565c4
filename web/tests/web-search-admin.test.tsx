/** The web search screen: the body each engine takes, the key kept or cleared, never shown; the host screen's sections. */
import { act } from 'preact/test-utils';
import { describe, expect, it } from 'vitest';
import { WebSearchAdmin } from '../src/components/host/WebSearchAdmin';
import { CAPABILITY } from '../src/host/protocol';
import { setBody, startForm, type WebSearchView } from '../src/host/web-search-form';
import { hostSections } from '../src/screens/HostScreen';
import { fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';

const BRAVE: WebSearchView = { engine: 'brave', baseUrl: null, engineId: null, keySet: true };
const DEFAULT: WebSearchView = { engine: 'duckduckgo', baseUrl: null, engineId: null, keySet: false };

describe('web search bodies', () => {
  it('sends only what the chosen engine takes', () => {
    expect(setBody(DEFAULT, startForm(DEFAULT))).toEqual({ engine: 'duckduckgo' });
    expect(setBody(DEFAULT, { engine: 'searxng', baseUrl: ' https://searx.example ', engineId: 'x', key: 'k' })).toEqual({ engine: 'searxng', baseUrl: 'https://searx.example' });
    expect(setBody(DEFAULT, { engine: 'google', baseUrl: '', engineId: ' cx1 ', key: ' gkey ' })).toEqual({ engine: 'google', engineId: 'cx1', key: 'gkey' });
  });

  it('keeps the key set for the same engine when none is typed, and never for another engine', () => {
    expect(setBody(BRAVE, startForm(BRAVE))).toEqual({ engine: 'brave', keepKey: true });
    expect(setBody(BRAVE, { ...startForm(BRAVE), key: 'new-key' })).toEqual({ engine: 'brave', key: 'new-key' });
    expect(setBody(BRAVE, { ...startForm(BRAVE), engine: 'google', engineId: 'cx' })).toEqual({ engine: 'google', engineId: 'cx' });
  });
});

const mount = mountPoint();

describe('WebSearchAdmin', () => {
  it('sends a typed key and empties its input at once', async () => {
    const { connection, calls } = fakeConnection({ 'web-search-v1/get': BRAVE, 'web-search-v1/set': BRAVE });
    await show(<WebSearchAdmin connection={connection} role="admin" />, mount.element);
    const container = mount.element;
    const key = container.querySelector<HTMLInputElement>('input[type="password"]')!;
    expect(key.value).toBe('');
    expect(container.textContent).toContain('Key set');
    await typeInto(key, 'brave-key-typed');
    await submit(container.querySelector('form')!);
    expect(calls).toContainEqual(['web-search-v1/set', { engine: 'brave', key: 'brave-key-typed' }]);
    expect(container.querySelector<HTMLInputElement>('input[type="password"]')!.value).toBe('');
    expect(container.innerHTML).not.toContain('brave-key-typed');
  });

  it('keeps saying "Saved." once the host answers with the new engine', async () => {
    const answers: Record<string, unknown> = { 'web-search-v1/get': DEFAULT };
    const { connection, calls } = fakeConnection(answers);
    await show(<WebSearchAdmin connection={connection} role="owner" />, mount.element);
    await typeInto(mount.element.querySelector<HTMLSelectElement>('select')!, 'searxng', 'change');
    await typeInto(mount.element.querySelector<HTMLInputElement>('input[type="url"]')!, 'https://searx.example');
    answers['web-search-v1/get'] = { ...DEFAULT, engine: 'searxng', baseUrl: 'https://searx.example' };
    await submit(mount.element.querySelector('form')!);
    await act(async () => {});
    expect(calls).toContainEqual(['web-search-v1/set', { engine: 'searxng', baseUrl: 'https://searx.example' }]);
    expect(mount.element.querySelector<HTMLInputElement>('input[type="url"]')!.value).toBe('https://searx.example');
    expect(mount.element.textContent).toContain('Saved.');
  });

  it('shows members the engine read-only, with the reason', async () => {
    const { connection } = fakeConnection({ 'web-search-v1/get': BRAVE });
    await show(<WebSearchAdmin connection={connection} role="member" />, mount.element);
    const container = mount.element;
    expect(container.textContent).toContain('Only admins and owners change this');
    expect(container.textContent).toContain('Brave Search');
    expect(container.querySelectorAll('button, input, select')).toHaveLength(0);
  });
});

describe('the host screen’s sections', () => {
  const every = new Set<string>(Object.values(CAPABILITY));
  it('opens on Chat when the host offers chat, on Tabs otherwise', () => {
    expect(hostSections(every)).toEqual(['chat', 'tabs', 'profiles', 'proxies', 'agents', 'skills', 'providers', 'usage', 'vault', 'search', 'webhooks', 'mcp', 'workspace', 'notifications']);
    const noChat = new Set([...every].filter((c) => c !== CAPABILITY.threads));
    expect(hostSections(noChat)[0]).toBe('tabs');
  });

  it('hides what the host lacks', () => {
    const bare = new Set([CAPABILITY.browserControl, CAPABILITY.browserProxies]);
    expect(hostSections(bare)).toEqual(['tabs']);
  });
});
