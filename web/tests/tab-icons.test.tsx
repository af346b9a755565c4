/** Page icons in the tab list: loaded once per hash, shown only as data: images. */
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TabList } from '../src/components/host/TabList';
import type { HostConnection } from '../src/host/connection';
import type { TabView } from '../src/host/protocol';
import { isIconAddress } from '../src/host/tab-icons';

const PNG = 'data:image/png;base64,iVBORw0KGgo=';

function tab(id: string, icon: string | null): TabView {
  return {
    id,
    url: `http://127.0.0.1:8080/${id}`,
    title: `Page ${id}`,
    icon,
    ownerAgentId: null,
    openerTabId: null,
    partitionKind: 'shared',
    partitionLabel: 'Shared',
    hue: null,
    heldByPerson: false,
    heldBy: null,
    loaded: true,
  };
}

function fakeConnection(icons: Record<string, { icon: string | null; dataUrl: string | null }>) {
  const call = vi.fn(async (route: string, args: { tabId?: string }) => {
    if (route === 'browser-control-v1/tab_icon') return { tabId: args.tabId, ...icons[args.tabId ?? ''] };
    return {};
  });
  return { connection: { call, onEvent: () => () => {} } as unknown as HostConnection, call };
}

let container: HTMLElement;
beforeEach(() => {
  container = document.createElement('div');
  document.body.append(container);
});
afterEach(() => {
  render(null, container);
  container.remove();
});

async function show(connection: HostConnection, tabs: TabView[]) {
  await act(async () => {
    render(<TabList connection={connection} tabs={tabs} error={null} selected={null} profilesServed={false} meId="me" names={new Map()} agentNames={new Map()} onSelect={() => {}} />, container);
  });
  await act(async () => {});
}

describe('tab icons', () => {
  it('shows each icon as a data: image, asking once for tabs that share it', async () => {
    const { connection, call } = fakeConnection({
      a: { icon: 'h1', dataUrl: PNG },
      b: { icon: 'h1', dataUrl: PNG },
      c: { icon: null, dataUrl: null },
    });
    await show(connection, [tab('a', 'h1'), tab('b', 'h1'), tab('c', null)]);
    const images = [...container.querySelectorAll<HTMLImageElement>('img.tab-row-icon')];
    expect(images.map((image) => image.getAttribute('src'))).toEqual([PNG, PNG]);
    expect(call.mock.calls.filter(([route]) => route === 'browser-control-v1/tab_icon')).toHaveLength(1);
    expect(container.querySelectorAll('.tab-row-icon-none')).toHaveLength(1);
  });

  it('never shows an icon that is not a data: image', async () => {
    const { connection } = fakeConnection({
      x: { icon: 'h2', dataUrl: 'https://tracker.example/pixel.png' },
      y: { icon: 'h3', dataUrl: 'data:text/html,<script>alert(1)</script>' },
    });
    await show(connection, [tab('x', 'h2'), tab('y', 'h3')]);
    expect(container.querySelectorAll('img')).toHaveLength(0);
    expect(isIconAddress(PNG)).toBe(true);
    expect(isIconAddress('javascript:alert(1)')).toBe(false);
  });
});
