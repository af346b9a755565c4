/** Agent templates: export with the two boxes, import after a preview with the mapping, update after a diff, and refusals that say where. */
import { act } from 'preact/test-utils';
import { describe, expect, it, vi } from 'vitest';
import { AgentTemplateActions, AgentTemplateImport } from '../src/components/host/AgentTemplates';
import { button, fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';

const AGENT = 'a'.repeat(32);
const UPLOAD = 'b'.repeat(32);
const SERVER = 'c'.repeat(32);
const PREVIEW = {
  name: 'Clerk',
  exportedAt: 1,
  contentHash: 'f'.repeat(64),
  formatVersion: 1,
  instructionsChars: 42,
  permissions: {},
  maxToolCalls: null,
  provider: { id: 'anthropic', kind: 'anthropic', name: 'Anthropic', model: 'claude-test', match: 'anthropic', modelAvailable: true },
  providers: [
    { id: 'anthropic', name: 'Anthropic', kind: 'anthropic', models: ['claude-test'], usable: true },
    { id: 'openai', name: 'OpenAI', kind: 'openai', models: [], usable: false },
  ],
  mcpServers: [{ name: 'tickets', transport: 'http', match: null }],
  skills: [{ name: 'expenses', status: 'new' }],
  routines: [{ name: 'Weekly', schedule: 'cron', enabled: true }],
  memories: 2,
  workspaceFiles: 0,
  workspaceBytes: 0,
  conflicts: ['the team has no MCP server named \'tickets\''],
  changes: null,
};
const ANSWERS = {
  'agent-templates-v1/upload_start': { uploadId: UPLOAD, chunkBytes: 4 },
  'agent-templates-v1/upload_chunk': { received: 0 },
  'agent-templates-v1/preview': PREVIEW,
  'mcp-servers-v1/list': { servers: [{ id: SERVER, name: 'Tickets' }] },
  'agent-templates-v1/import': { agentId: AGENT, name: 'Clerk' },
  'agent-templates-v1/update': { agentId: AGENT, name: 'Clerk' },
};

async function choose(root: HTMLElement, bytes: Uint8Array<ArrayBuffer>): Promise<void> {
  const input = root.querySelector<HTMLInputElement>('input[type=file]')!;
  Object.defineProperty(input, 'files', { value: [Object.assign(new File([bytes], 'clerk.crewhost-agent.zip'), { arrayBuffer: async () => bytes.buffer })], configurable: true });
  await act(async () => {
    input.dispatchEvent(new Event('change', { bubbles: true }));
  });
  await vi.waitFor(async () => {
    await act(async () => {});
    expect(root.querySelector('form')).not.toBeNull();
  });
}

describe('agent templates', () => {
  const mount = mountPoint();

  it('uploads the file in chunks, shows what it brings and needs, and imports with the chosen mapping', async () => {
    const { connection, calls } = fakeConnection(ANSWERS);
    await show(<AgentTemplateImport connection={connection} />, mount.element);
    await choose(mount.element, new Uint8Array([1, 2, 3, 4, 5, 6]));
    expect(calls.filter(([route]) => route === 'agent-templates-v1/upload_chunk').map(([, a]) => (a as { offset: number }).offset)).toEqual([0, 4]);
    const text = mount.element.textContent ?? '';
    expect(text).toContain('Skill expenses (new to the team)');
    expect(text).toContain('Routine Weekly');
    expect(text).toContain('2 memories');
    expect(text).toContain("the team has no MCP server named 'tickets'");
    const selects = mount.element.querySelectorAll('select');
    expect(selects[0].value).toBe('anthropic');
    await typeInto(selects[1], SERVER, 'change');
    await submit(mount.element.querySelector('form')!);
    expect(calls).toContainEqual(['agent-templates-v1/import', { uploadId: UPLOAD, provider: 'anthropic', mcpServers: { tickets: SERVER }, skills: 'keep' }]);
    expect(mount.element.textContent).toContain('Imported Clerk.');
  });

  it('shows the changes and the instructions diff before updating an agent', async () => {
    const changes = [{ what: 'instructions', before: '10 characters', after: '20 characters', diff: '-Old.\n+New.\n' }];
    const { connection, calls } = fakeConnection({ ...ANSWERS, 'agent-templates-v1/preview': { ...PREVIEW, mcpServers: [], conflicts: [], changes } });
    await show(<AgentTemplateActions connection={connection} agentId={AGENT} />, mount.element);
    await choose(mount.element.querySelector('.agent-template-update')!, new Uint8Array([1]));
    expect(calls).toContainEqual(['agent-templates-v1/preview', { uploadId: UPLOAD, agentId: AGENT }]);
    expect(mount.element.querySelector('.agent-template-diff')?.textContent).toBe('-Old.\n+New.\n');
    await submit(mount.element.querySelector('form')!);
    expect(calls).toContainEqual(['agent-templates-v1/update', { uploadId: UPLOAD, agentId: AGENT, provider: 'anthropic', mcpServers: {}, skills: 'keep' }]);
  });

  it('exports with the boxes ticked, and a refused export says where', async () => {
    const { connection, calls } = fakeConnection({}, { 'agent-templates-v1/export': 'agentTemplateSecretFound' });
    await show(<AgentTemplateActions connection={connection} agentId={AGENT} />, mount.element);
    const boxes = mount.element.querySelectorAll<HTMLInputElement>('.agent-template-export input[type=checkbox]');
    await act(async () => {
      boxes[1].click();
    });
    await act(async () => {
      button(mount.element, 'Download').click();
    });
    await act(async () => {});
    expect(calls).toContainEqual(['agent-templates-v1/export', { agentId: AGENT, includeMemories: false, includeWorkspace: true }]);
    expect(mount.element.textContent).toContain('looks like a key or token');
    expect(mount.element.textContent).toContain('refused');
  });
});
