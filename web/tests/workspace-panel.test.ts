/** The workspace browser: paths it walks into and back up, and a large folder a page at a time. */
import { h } from 'preact';
import { act } from 'preact/test-utils';
import { describe, expect, it, vi } from 'vitest';
import { WorkspacePanel, childPath, parentPath } from '../src/components/host/WorkspacePanel';
import type { AgentView } from '../src/components/host/ChatPanel';
import type { HostConnection } from '../src/host/connection';
import { button, mountPoint, show } from './host-fakes';

describe('workspace paths', () => {
  it('goes into folders and back up to the top', () => {
    expect(childPath('', 'notes')).toBe('notes');
    expect(childPath('notes', 'a.txt')).toBe('notes/a.txt');
    expect(parentPath('notes/2026')).toBe('notes');
    expect(parentPath('notes')).toBe('');
  });
});

const mount = mountPoint();
const AGENTS = [{ id: 'agent-1', name: 'Scout' }] as AgentView[];

/** A folder of ``names`` that the connection lists ``pageSize`` entries at a time. */
function pagedFolder(names: string[], pageSize: number) {
  const calls: Array<Record<string, unknown>> = [];
  const connection = {
    call: vi.fn(async (route: string, args: Record<string, unknown>) => {
      if (route !== 'workspace-v1/list') return {};
      calls.push(args);
      const offset = (args.offset as number | undefined) ?? 0;
      const entries = names.slice(offset, offset + pageSize).map((name) => ({ name, kind: 'file', size: 1, modifiedAt: 1 }));
      return { path: '', entries, total: names.length };
    }),
    onEvent: () => () => {},
  } as unknown as HostConnection;
  return { connection, calls };
}

const shownNames = (root: Element) => [...root.querySelectorAll('.workspace-name > span:first-child')].map((span) => span.textContent);
const hasButton = (root: Element, text: string) => [...root.querySelectorAll('button')].some((b) => b.textContent === text);

describe('WorkspacePanel', () => {
  it('shows the first page and appends the next on "Show more" until all are shown', async () => {
    const { connection, calls } = pagedFolder(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt'], 2);
    await show(h(WorkspacePanel, { connection, agents: AGENTS }), mount.element);
    expect(shownNames(mount.element)).toEqual(['a.txt', 'b.txt']);
    await act(async () => button(mount.element, 'Show more').click());
    expect(shownNames(mount.element)).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt']);
    await act(async () => button(mount.element, 'Show more').click());
    expect(shownNames(mount.element)).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']);
    expect(hasButton(mount.element, 'Show more')).toBe(false);
    expect(calls.map((args) => args.offset ?? 0)).toEqual([0, 2, 4]);
  });

  it('shows no "Show more" when one page holds the whole folder', async () => {
    const { connection } = pagedFolder(['a.txt'], 2);
    await show(h(WorkspacePanel, { connection, agents: AGENTS }), mount.element);
    expect(shownNames(mount.element)).toEqual(['a.txt']);
    expect(hasButton(mount.element, 'Show more')).toBe(false);
  });
});
