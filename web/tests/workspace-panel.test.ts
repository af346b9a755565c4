/** Paths the workspace browser walks: into a folder and back up. */
import { describe, expect, it } from 'vitest';
import { childPath, parentPath } from '../src/components/host/WorkspacePanel';

describe('workspace paths', () => {
  it('goes into folders and back up to the top', () => {
    expect(childPath('', 'notes')).toBe('notes');
    expect(childPath('notes', 'a.txt')).toBe('notes/a.txt');
    expect(parentPath('notes/2026')).toBe('notes');
    expect(parentPath('notes')).toBe('');
  });
});
