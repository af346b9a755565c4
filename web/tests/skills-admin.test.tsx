/** The Skills section: the list with drafts first, the editor and its preview, a draft's
 * review (save or discard), versions and what changed, uploads in chunks; each agent's
 * skill switches; and "Teach" on an agent's tab. */
import { act } from 'preact/test-utils';
import { describe, expect, it } from 'vitest';
import { AgentSkills } from '../src/components/host/AgentSkills';
import { SkillsAdmin } from '../src/components/host/SkillsAdmin';
import { TeachButtons, TeachOutcome, savedText, useTeaching } from '../src/components/host/TeachTask';
import { parseRoute } from '../src/router';
import { hostSections } from '../src/screens/HostScreen';
import { CAPABILITY, type TabView } from '../src/host/protocol';
import { isSkillName, newSkillMd, skillBody, sortSkills, uploadSkillZip, versionText, type SkillView } from '../src/host/skills';
import type { HostConnection } from '../src/host/connection';
import { button, fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';

const AGENT = 'a'.repeat(32);
const MD = '---\nname: file-expenses\ndescription: File an expense report.\n---\n\n# File it\n\n1. Open the site.\n';

function skill(name: string, state = 'saved', agents: string[] = []): SkillView {
  return {
    name,
    description: `What ${name} does.`,
    state,
    version: 1,
    createdAt: 1,
    createdBy: null,
    updatedAt: 1,
    updatedBy: null,
    proposedByAgent: state === 'draft' ? AGENT : null,
    proposedInThread: null,
    agents,
  };
}

function detail(name: string, state = 'saved', skillMd = MD) {
  return {
    skill: skill(name, state),
    version: 1,
    skillMd,
    license: null,
    compatibility: null,
    metadata: {},
    allowedTools: null,
    files: [
      { path: 'SKILL.md', size: skillMd.length, text: true },
      { path: 'reference/fares.md', size: 20, text: true },
    ],
  };
}

const mount = mountPoint();
const NAMES = new Map([[AGENT, 'Scout']]);

async function openRow(name: string): Promise<Element> {
  const row = mount.element.querySelector(`[data-skill="${name}"]`)!;
  const details = row.querySelector('details')!;
  await act(async () => {
    details.open = true;
    details.dispatchEvent(new Event('toggle'));
  });
  await act(async () => {});
  return row;
}

describe('skill texts', () => {
  it('shows the body without its front matter, and all of a text that has none', () => {
    expect(skillBody(MD)).toBe('# File it\n\n1. Open the site.\n');
    expect(skillBody('# Only a body')).toBe('# Only a body');
  });

  it('takes a skill name as the host does', () => {
    expect(isSkillName('file-expenses')).toBe(true);
    expect(isSkillName('File')).toBe(false);
    expect(isSkillName('a--b')).toBe(false);
    expect(isSkillName('-a')).toBe(false);
    expect(isSkillName('x'.repeat(65))).toBe(false);
  });

  it('starts a new skill with its name and a quoted description', () => {
    const text = newSkillMd('file-expenses', 'Files: "expenses"  now');
    expect(text.startsWith('---\nname: file-expenses\ndescription: "Files: \\"expenses\\" now"\n---\n')).toBe(true);
  });

  it('lists drafts first, then by name, and says how a version came to be', () => {
    expect(sortSkills([skill('b'), skill('z', 'draft'), skill('a')]).map((s) => s.name)).toEqual(['z', 'a', 'b']);
    const version = { version: 3, description: '', change: 'reverted', revertedFrom: 1, files: 1, size: 1, createdAt: 1, createdBy: null };
    expect(versionText(version)).toBe('Reverted to version 1');
    expect(versionText({ ...version, change: 'proposed' })).toBe('Proposed by an agent');
  });

  it('sends a .zip in chunks of the size the host names, then finishes it', async () => {
    const { connection, calls } = fakeConnection({
      'skills-v1/upload_start': { uploadId: 'u'.repeat(32), chunkBytes: 4 },
      'skills-v1/upload_finish': skill('uploaded'),
    });
    // jsdom's Blob cannot give its bytes; a file picked in a browser can.
    const zip = { arrayBuffer: async () => new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).buffer } as unknown as Blob;
    const uploaded = await uploadSkillZip(connection, zip, true);
    expect(uploaded.name).toBe('uploaded');
    expect(calls.map(([route]) => route)).toEqual(['skills-v1/upload_start', 'skills-v1/upload_chunk', 'skills-v1/upload_chunk', 'skills-v1/upload_chunk', 'skills-v1/upload_finish']);
    expect(calls.slice(1, 4).map(([, args]) => (args as { offset: number }).offset)).toEqual([0, 4, 8]);
    expect(calls[4]![1]).toEqual({ uploadId: 'u'.repeat(32), replace: true });
  });
});

describe('the Skills section', () => {
  it('is a host section after Agents when the host serves skills', () => {
    const served = new Set([CAPABILITY.agents, CAPABILITY.providers, CAPABILITY.skills]);
    expect(hostSections(served)).toEqual(['agents', 'skills', 'providers']);
    expect(hostSections(new Set([CAPABILITY.agents]))).toEqual(['agents']);
    expect(parseRoute('/app/teams/t1/hosts/h1/skills')).toEqual({ name: 'host', teamId: 't1', hostId: 'h1', section: 'skills' });
  });

  it('lists the skills, a draft first with who proposed it, and how many agents have each', async () => {
    const { connection } = fakeConnection({ 'skills-v1/list': { skills: [skill('travel', 'saved', [AGENT]), skill('expenses', 'draft')] } });
    await show(<SkillsAdmin connection={connection} role="admin" agentNames={NAMES} />, mount.element);
    const rows = [...mount.element.querySelectorAll('[data-skill]')];
    expect(rows.map((r) => r.getAttribute('data-skill'))).toEqual(['expenses', 'travel']);
    expect(rows[0]!.querySelector('.badge')?.textContent).toBe('Draft');
    expect(rows[0]!.textContent).toContain('proposed by Scout');
    expect(rows[1]!.textContent).toContain('Enabled for 1 agent (Scout)');
  });

  it('edits SKILL.md with a live preview and saves it as a new version', async () => {
    const { connection, calls } = fakeConnection({
      'skills-v1/list': { skills: [skill('file-expenses')] },
      'skills-v1/get': detail('file-expenses'),
      'skills-v1/update': { ...skill('file-expenses'), version: 2 },
    });
    await show(<SkillsAdmin connection={connection} role="owner" agentNames={NAMES} />, mount.element);
    const row = await openRow('file-expenses');
    const editor = row.querySelector<HTMLTextAreaElement>('textarea')!;
    expect(editor.value).toBe(MD);
    expect(row.querySelector('.skill-preview h3')?.textContent).toBe('File it');
    expect(row.querySelector('.skill-preview')?.textContent).not.toContain('description');
    expect(button(row, 'Save').disabled).toBe(true);
    await typeInto(editor, `${MD}2. Attach the receipt.\n`);
    expect(row.querySelector('.skill-preview')?.textContent).toContain('Attach the receipt.');
    await submit(button(row, 'Save').closest('form')!);
    await act(async () => {});
    expect(calls.find(([route]) => route === 'skills-v1/update')?.[1]).toEqual({ name: 'file-expenses', files: { 'SKILL.md': `${MD}2. Attach the receipt.\n` } });
    expect(row.textContent).toContain('Saved as version 2.');
    expect(row.textContent).toContain('reference/fares.md');
  });

  it('reviews a draft: the edit is written, then the draft saved; or it is discarded after a question', async () => {
    const { connection, calls } = fakeConnection({
      'skills-v1/list': { skills: [skill('expenses', 'draft')] },
      'skills-v1/get': detail('expenses', 'draft'),
      'skills-v1/save_draft': skill('expenses'),
    });
    await show(<SkillsAdmin connection={connection} role="admin" agentNames={NAMES} />, mount.element);
    const row = await openRow('expenses');
    expect(row.textContent).toContain('An agent proposed this skill');
    expect(row.textContent).not.toContain('Delete…');
    await typeInto(row.querySelector('textarea')!, `${MD}More.\n`);
    await act(async () => button(row, 'Save').click());
    await act(async () => {});
    expect(calls.map(([route]) => route).filter((r) => r !== 'skills-v1/list' && r !== 'skills-v1/get')).toEqual(['skills-v1/update', 'skills-v1/save_draft']);
    await act(async () => button(row, 'Discard').click());
    expect(calls.some(([route]) => route === 'skills-v1/discard_draft')).toBe(false);
    await act(async () => button(row, 'Discard it').click());
    expect(calls.find(([route]) => route === 'skills-v1/discard_draft')?.[1]).toEqual({ name: 'expenses' });
  });

  it('shows a version\'s changes and reverts to it', async () => {
    const versions = [
      { version: 2, description: '', change: 'edited', revertedFrom: null, files: 1, size: 10, createdAt: 1, createdBy: null },
      { version: 1, description: '', change: 'created', revertedFrom: null, files: 1, size: 9, createdAt: 1, createdBy: null },
    ];
    const { connection, calls } = fakeConnection({
      'skills-v1/list': { skills: [{ ...skill('expenses'), version: 2 }] },
      'skills-v1/get': { ...detail('expenses'), skill: { ...skill('expenses'), version: 2 }, version: 2 },
      'skills-v1/versions': { name: 'expenses', versions },
      'skills-v1/diff': { changes: [{ path: 'SKILL.md', status: 'changed', diff: '--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new' }], truncated: false },
      'skills-v1/revert': { ...skill('expenses'), version: 3 },
    });
    await show(<SkillsAdmin connection={connection} role="admin" agentNames={NAMES} />, mount.element);
    const row = await openRow('expenses');
    const history = row.querySelector<HTMLDetailsElement>('.skill-versions')!;
    await act(async () => {
      history.open = true;
      history.dispatchEvent(new Event('toggle'));
    });
    await act(async () => {});
    const second = row.querySelector('[data-version="2"]')!;
    const first = row.querySelector('[data-version="1"]')!;
    expect(() => button(second, 'Revert')).toThrow(); // the newest is not reverted to
    await act(async () => button(second, 'What changed').click());
    await act(async () => {});
    expect(calls.find(([route]) => route === 'skills-v1/diff')?.[1]).toEqual({ name: 'expenses', old: 1, new: 2 });
    expect(row.querySelector('.diff-add')?.textContent).toBe('+new\n');
    expect(row.querySelector('.diff-remove')?.textContent).toBe('-old\n');
    await act(async () => button(first, 'Revert').click());
    await act(async () => button(first, 'Revert').click());
    await act(async () => {});
    expect(calls.find(([route]) => route === 'skills-v1/revert')?.[1]).toEqual({ name: 'expenses', version: 1 });
  });

  it('deletes a skill only after a question, and reads nothing of it again', async () => {
    const { connection, calls } = fakeConnection({
      'skills-v1/list': { skills: [skill('expenses')] },
      'skills-v1/get': detail('expenses'),
      'skills-v1/delete': { done: true },
    });
    await show(<SkillsAdmin connection={connection} role="admin" agentNames={NAMES} />, mount.element);
    const row = await openRow('expenses');
    await act(async () => button(row, 'Delete…').click());
    expect(row.textContent).toContain('Delete expenses and all its versions? Agents that have it lose it.');
    expect(calls.some(([route]) => route === 'skills-v1/delete')).toBe(false);
    const reads = calls.filter(([route]) => route === 'skills-v1/get').length;
    await act(async () => button(row, 'Delete for good').click());
    await act(async () => {});
    expect(calls.find(([route]) => route === 'skills-v1/delete')?.[1]).toEqual({ name: 'expenses' });
    expect(calls.filter(([route]) => route === 'skills-v1/get').length).toBe(reads);
  });

  it('lets a member read a skill without a control to change it', async () => {
    const { connection } = fakeConnection({
      'skills-v1/list': { skills: [skill('expenses'), skill('draft-one', 'draft')] },
      'skills-v1/get': detail('expenses'),
    });
    await show(<SkillsAdmin connection={connection} role="member" agentNames={NAMES} />, mount.element);
    expect(mount.element.textContent).toContain('Only admins and owners change this.');
    expect(mount.element.querySelector('#new-skill-name')).toBeNull();
    const row = await openRow('expenses');
    expect(row.querySelector('textarea')!.readOnly).toBe(true);
    const labels = [...row.querySelectorAll('button')].map((b) => b.textContent);
    expect(labels).toContain('Download .zip');
    expect(labels).not.toContain('Save');
    expect(labels).not.toContain('Delete…');
  });

  it('creates a skill from a name and a description, and refuses a bad name before asking', async () => {
    const { connection, calls } = fakeConnection({ 'skills-v1/list': { skills: [] }, 'skills-v1/create': skill('expenses') });
    await show(<SkillsAdmin connection={connection} role="admin" agentNames={NAMES} />, mount.element);
    expect(mount.element.textContent).toContain('The team has no skills yet.');
    const create = button(mount.element, 'Create skill');
    await typeInto(mount.element.querySelector<HTMLInputElement>('#new-skill-name')!, 'Bad Name');
    await typeInto(mount.element.querySelector<HTMLInputElement>('#new-skill-description')!, 'Files expenses.');
    expect(create.disabled).toBe(true);
    await typeInto(mount.element.querySelector<HTMLInputElement>('#new-skill-name')!, 'expenses');
    expect(create.disabled).toBe(false);
    await submit(create.closest('form')!);
    await act(async () => {});
    const files = (calls.find(([route]) => route === 'skills-v1/create')?.[1] as { files: Record<string, string> }).files;
    expect(skillBody(files['SKILL.md']!)).toContain('# expenses');
    expect(mount.element.textContent).toContain('expenses is saved (version 1).');
  });
});

describe("an agent's skills", () => {
  it('switches the team\'s saved skills on and off for the agent; drafts are not offered', async () => {
    const { connection, calls } = fakeConnection({
      'skills-v1/list': { skills: [skill('travel'), skill('expenses'), skill('proposal', 'draft')] },
      'skills-v1/agent_skills': { agentId: AGENT, skills: [{ name: 'travel', description: 'x' }] },
    });
    await show(<AgentSkills connection={connection} agentId={AGENT} canManage={true} />, mount.element);
    const switches = [...mount.element.querySelectorAll<HTMLInputElement>('input[role="switch"]')];
    expect(switches.map((s) => [s.parentElement!.textContent, s.checked])).toEqual([
      ['expenses', false],
      ['travel', true],
    ]);
    await act(async () => switches[0]!.click());
    expect(calls.find(([route]) => route === 'skills-v1/enable')?.[1]).toEqual({ name: 'expenses', agentId: AGENT, enabled: true });
  });

  it('shows a member the switches without letting them change one', async () => {
    const { connection } = fakeConnection({
      'skills-v1/list': { skills: [skill('travel')] },
      'skills-v1/agent_skills': { agentId: AGENT, skills: [] },
    });
    await show(<AgentSkills connection={connection} agentId={AGENT} canManage={false} />, mount.element);
    expect(mount.element.querySelector<HTMLInputElement>('input[role="switch"]')!.disabled).toBe(true);
  });
});

describe('teaching a task', () => {
  const tab = { id: 't'.repeat(32), ownerAgentId: AGENT } as TabView;

  function Teach(props: { connection: HostConnection; holding: boolean; onReview: () => void }) {
    const teaching = useTeaching(props.connection, tab, props.holding, 'Scout');
    return (
      <div>
        <TeachButtons teaching={teaching} disabled={false} />
        <TeachOutcome teaching={teaching} onReview={props.onReview} />
      </div>
    );
  }

  it('records, then sends the steps and leads to the draft skill in Skills', async () => {
    const recording = { id: 'r'.repeat(32), tabId: tab.id, agentId: AGENT, startedAt: 1, expiresAt: 601, maxSteps: 200 };
    const { connection, calls } = fakeConnection({
      'browser-teach-v1/start': recording,
      'browser-teach-v1/save': { sent: true, threadId: 'h'.repeat(32), steps: 4, path: 'teaching/steps.txt' },
    });
    let reviewed = 0;
    await show(<Teach connection={connection} holding={true} onReview={() => reviewed++} />, mount.element);
    await act(async () => button(mount.element, 'Teach').click());
    expect(calls[0]).toEqual(['browser-teach-v1/start', { tabId: tab.id }]);
    expect(mount.element.textContent).toContain('Recording');
    await act(async () => button(mount.element, 'Done, teach it').click());
    expect(calls[1]).toEqual(['browser-teach-v1/save', { recordingId: recording.id }]);
    expect(mount.element.textContent).toContain('Scout got the 4 steps');
    await act(async () => button(mount.element, 'Open Skills').click());
    expect(reviewed).toBe(1);
  });

  it('says when nothing was sent, and the reason a start was refused', async () => {
    expect(savedText({ sent: false, threadId: null, steps: 0, path: null }, 'Scout').review).toBe(false);
    const { connection } = fakeConnection({}, { 'browser-teach-v1/start': 'teachNotWatching' });
    await show(<Teach connection={connection} holding={false} onReview={() => {}} />, mount.element);
    await act(async () => button(mount.element, 'Teach').click());
    await act(async () => {});
    expect(mount.element.textContent).toContain('Open the tab’s live view first');
  });
});
