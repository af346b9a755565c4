/**
 * The team's skills (`skills-v1`): each with its description, whether it is a draft and how
 * many agents have it; its SKILL.md in a Markdown editor with a preview, its files, its
 * versions with what changed in each and a revert, its `.zip` to download, and delete. Owners
 * and admins create, upload a `.zip` and edit (every save is a version); a draft an agent
 * proposed is reviewed here, edited, then saved or discarded. Members read.
 */

import { useRef, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { EVENT, type Role } from '../../host/protocol';
import {
  SKILL_FILE,
  SKILL_ZIP_MAX_BYTES,
  downloadSkillZip,
  isSkillName,
  newSkillMd,
  skillBody,
  sortSkills,
  uploadSkillZip,
  versionText,
  type SkillView,
} from '../../host/skills';
import { useHostLoad } from '../../host/use-host-call';
import { formatDateTime } from '../../time-format';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { Markdown } from './Markdown';
import { READ_ONLY_REASON } from './ProvidersAdmin';

const SKILL_EVENTS = [EVENT.skillsChanged];

function saveBlob(fileName: string, blob: Blob): void {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(blob);
  link.download = fileName;
  link.click();
  URL.revokeObjectURL(link.href);
}

export function SkillsAdmin(props: { connection: HostConnection; role: Role; agentNames: ReadonlyMap<string, string> }) {
  const { connection } = props;
  const canManage = props.role !== 'member';
  const list = useHostLoad(connection, 'skills-v1/list', {}, SKILL_EVENTS);
  const skills = sortSkills(list.data?.skills ?? []);
  return (
    <section class="admin-panel card card-body" aria-label="Skills">
      <h2>Skills</h2>
      <p class="admin-muted">
        Know-how the team's agents read when a task needs it. An agent sees each of its skills' name and description, and reads the rest only when it uses one.
      </p>
      {canManage ? null : <Banner tone="info">{READ_ONLY_REASON}</Banner>}
      {canManage ? <NewSkill connection={connection} /> : null}
      {list.error ? <Banner tone="error">{describeError(list.error)}</Banner> : null}
      {list.data && !skills.length ? <p class="empty">The team has no skills yet.</p> : null}
      <ul class="admin-list">
        {skills.map((skill) => (
          <SkillRow key={skill.name} connection={connection} skill={skill} canManage={canManage} agentNames={props.agentNames} />
        ))}
      </ul>
    </section>
  );
}

function NewSkill({ connection }: { connection: HostConnection }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [replace, setReplace] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const picker = useRef<HTMLInputElement>(null);
  const run = (work: Promise<SkillView>, after: () => void) => {
    setError(null);
    setDone(null);
    work.then((skill) => {
      setDone(`${skill.name} is saved (version ${skill.version}).`);
      after();
    }, setError);
  };
  const create = (event: Event) => {
    event.preventDefault();
    run(connection.call('skills-v1/create', { files: { [SKILL_FILE]: newSkillMd(name, description) } }), () => {
      setName('');
      setDescription('');
    });
  };
  const upload = (file: File | undefined) => {
    if (!file) return;
    if (file.size > SKILL_ZIP_MAX_BYTES) {
      setDone(null);
      setError(new Error(`${file.name} is larger than ${SKILL_ZIP_MAX_BYTES / (1024 * 1024)} MiB.`));
      return;
    }
    run(uploadSkillZip(connection, file, replace), () => undefined);
  };
  const nameOk = isSkillName(name);
  return (
    <div class="skill-new">
      <form class="admin-create" onSubmit={create}>
        <label for="new-skill-name">New skill's name</label>
        <div class="admin-create-row">
          <input id="new-skill-name" type="text" placeholder="file-expenses" value={name} onInput={(e) => setName(e.currentTarget.value.trim())} />
        </div>
        {name && !nameOk ? <p class="admin-muted">Lowercase letters, digits and single hyphens, at most 64.</p> : null}
        <label for="new-skill-description">What it is for</label>
        <div class="admin-create-row">
          <input id="new-skill-description" type="text" placeholder="Files an expense report on the team's expenses site" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          <button type="submit" class="btn btn-primary" disabled={!nameOk || !description.trim()}>
            Create skill
          </button>
        </div>
      </form>
      <div class="admin-inline skill-upload">
        <input ref={picker} type="file" accept=".zip,application/zip" hidden aria-label="Skill .zip to upload" onChange={(e) => {
          upload(e.currentTarget.files?.[0]);
          e.currentTarget.value = '';
        }} />
        <button type="button" class="btn btn-secondary btn-sm" onClick={() => picker.current?.click()}>
          Upload a .zip…
        </button>
        <label>
          <input type="checkbox" checked={replace} onChange={(e) => setReplace(e.currentTarget.checked)} /> Replace a skill of the same name (as a new version)
        </label>
      </div>
      {done ? <Banner tone="success">{done}</Banner> : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
    </div>
  );
}

function SkillRow(props: { connection: HostConnection; skill: SkillView; canManage: boolean; agentNames: ReadonlyMap<string, string> }) {
  const { skill } = props;
  const [open, setOpen] = useState(false);
  const draft = skill.state === 'draft';
  const agents = skill.agents.map((id) => props.agentNames.get(id) ?? 'an agent that is gone');
  return (
    <li class="admin-row" data-skill={skill.name}>
      <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
        <summary>
          <strong>{skill.name}</strong> {draft ? <span class="badge badge-draft">Draft</span> : null}{' '}
          <span class="admin-muted">{skill.description}</span>
          {draft ? (
            <span class="admin-muted skill-source">
              {' '}
              · proposed by {skill.proposedByAgent ? (props.agentNames.get(skill.proposedByAgent) ?? 'an agent') : 'an agent'}, waiting for review
            </span>
          ) : (
            <span class="admin-muted skill-agents"> · {agents.length ? `Enabled for ${agents.length === 1 ? '1 agent' : `${agents.length} agents`} (${agents.join(', ')})` : 'No agent has it'}</span>
          )}
        </summary>
        {open ? <SkillEditor {...props} /> : null}
      </details>
    </li>
  );
}

function SkillEditor(props: { connection: HostConnection; skill: SkillView; canManage: boolean }) {
  const { connection, skill, canManage } = props;
  const name = skill.name;
  const draftSkill = skill.state === 'draft';
  const got = useHostLoad(connection, 'skills-v1/get', { name }, SKILL_EVENTS);
  // What the person typed; null while they have changed nothing (the newest version shows).
  const [edited, setEdited] = useState<string | null>(null);
  const [opened, setOpened] = useState<{ path: string; text: string | null } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const text = edited ?? got.data?.skillMd ?? '';
  // A skill deleted or discarded leaves the list: nothing of it is read again.
  const run = <T,>(work: Promise<T>, message: (value: T) => string | null, reload = true) => {
    setError(null);
    setDone(null);
    work.then((value) => {
      setDone(message(value));
      if (reload) got.reload();
    }, setError);
  };
  const writeEdits = (): Promise<unknown> =>
    edited !== null && edited !== got.data?.skillMd ? connection.call('skills-v1/update', { name, files: { [SKILL_FILE]: edited } }) : Promise.resolve(null);
  const save = (event: Event) => {
    event.preventDefault();
    run(
      connection.call('skills-v1/update', { name, files: { [SKILL_FILE]: text } }).then((saved) => {
        setEdited(null);
        return saved;
      }),
      (saved) => `Saved as version ${saved.version}.`,
    );
  };
  const saveDraft = () =>
    run(
      writeEdits().then(() => {
        setEdited(null);
        return connection.call('skills-v1/save_draft', { name });
      }),
      () => 'Saved. Agents that have it use it from their next turn.',
    );
  if (got.error && !got.data) return <Banner tone="error">{describeError(got.error)}</Banner>;
  if (!got.data) return <p class="admin-muted">Loading…</p>;
  const files = got.data.files.filter((f) => f.path !== SKILL_FILE);
  return (
    <div class="skill-editor">
      {draftSkill ? (
        <Banner tone="info">An agent proposed this skill. Read it, change what needs changing, then save it for the team or discard it. Agents do not see a draft.</Banner>
      ) : null}
      <form class="admin-form" onSubmit={save}>
        <div class="skill-panes">
          <label class="skill-source-pane">
            {SKILL_FILE}
            <textarea class="skill-md" rows={16} spellcheck={false} value={text} readOnly={!canManage} onInput={(e) => setEdited(e.currentTarget.value)} />
          </label>
          <div class="skill-preview" aria-label="Preview">
            <span class="admin-muted">Preview</span>
            <Markdown text={skillBody(text)} />
          </div>
        </div>
        {canManage ? (
          <div class="admin-inline">
            {draftSkill ? (
              <>
                <button type="button" class="btn btn-primary btn-sm" onClick={saveDraft}>
                  Save
                </button>
                <ConfirmButton label="Discard" question={`Discard the draft ${name}?`} confirmLabel="Discard it" size="sm" onConfirm={() => run(connection.call('skills-v1/discard_draft', { name }), () => null, false)} />
              </>
            ) : (
              <>
                <button type="submit" class="btn btn-primary btn-sm" disabled={edited === null || edited === got.data.skillMd}>
                  Save
                </button>
                {edited !== null && edited !== got.data.skillMd ? (
                  <button type="button" class="btn btn-ghost btn-sm" onClick={() => setEdited(null)}>
                    Undo changes
                  </button>
                ) : null}
              </>
            )}
            <button type="button" class="btn btn-secondary btn-sm" onClick={() => run(downloadSkillZip(connection, name).then(({ fileName, blob }) => saveBlob(fileName, blob)), () => null)}>
              Download .zip
            </button>
            {draftSkill ? null : (
              <ConfirmButton label="Delete…" question={`Delete ${name} and all its versions? Agents that have it lose it.`} confirmLabel="Delete for good" size="sm" onConfirm={() => run(connection.call('skills-v1/delete', { name }), () => null, false)} />
            )}
          </div>
        ) : (
          <div class="admin-inline">
            <button type="button" class="btn btn-secondary btn-sm" onClick={() => run(downloadSkillZip(connection, name).then(({ fileName, blob }) => saveBlob(fileName, blob)), () => null)}>
              Download .zip
            </button>
          </div>
        )}
      </form>
      {done ? <Banner tone="success">{done}</Banner> : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="skill-files">
        <h3>Files</h3>
        {files.length ? (
          <ul class="skill-file-list">
            {files.map((file) => (
              <li key={file.path}>
                <button
                  type="button"
                  class="btn btn-ghost btn-sm"
                  disabled={!file.text}
                  onClick={() =>
                    connection.call('skills-v1/read_file', { name, path: file.path }).then((read) => setOpened({ path: read.path, text: read.text }), setError)
                  }
                >
                  {file.path}
                </button>{' '}
                <span class="admin-muted">{file.text ? `${file.size} bytes` : `${file.size} bytes, not text`}</span>
              </li>
            ))}
          </ul>
        ) : (
          <p class="admin-muted">Only {SKILL_FILE}.</p>
        )}
        {opened ? (
          <div class="skill-file-view">
            <div class="admin-inline">
              <strong>{opened.path}</strong>
              <button type="button" class="btn btn-ghost btn-sm" onClick={() => setOpened(null)}>
                Close
              </button>
            </div>
            <pre>{opened.text ?? ''}</pre>
          </div>
        ) : null}
      </div>
      <Versions connection={connection} name={name} newest={got.data.skill.version} canManage={canManage} onReverted={(v) => setDone(`Reverted to version ${v}.`)} />
    </div>
  );
}

function Versions(props: { connection: HostConnection; name: string; newest: number; canManage: boolean; onReverted: (version: number) => void }) {
  const { connection, name } = props;
  const [open, setOpen] = useState(false);
  const versions = useHostLoad(open ? connection : null, 'skills-v1/versions', { name }, SKILL_EVENTS);
  const [diff, setDiff] = useState<{ version: number; lines: string[]; truncated: boolean } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const showDiff = (version: number) => {
    setError(null);
    connection.call('skills-v1/diff', { name, old: version - 1, new: version }).then(
      (found) => setDiff({ version, lines: found.changes.flatMap((c) => c.diff.split('\n')), truncated: found.truncated }),
      setError,
    );
  };
  return (
    <details class="skill-versions" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Versions ({props.newest})</summary>
      {versions.error ? <Banner tone="error">{describeError(versions.error)}</Banner> : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <ul class="skill-version-list">
        {(versions.data?.versions ?? []).map((v) => (
          <li key={v.version} data-version={v.version}>
            <span>
              <strong>Version {v.version}</strong> <span class="admin-muted">{versionText(v)} · {formatDateTime(v.createdAt)} · {v.files === 1 ? '1 file' : `${v.files} files`}</span>
            </span>
            <span class="admin-inline">
              {v.version > 1 ? (
                <button type="button" class="btn btn-ghost btn-sm" onClick={() => showDiff(v.version)}>
                  What changed
                </button>
              ) : null}
              {props.canManage && v.version !== props.newest ? (
                <ConfirmButton
                  label="Revert"
                  question={`Make version ${v.version} the newest again?`}
                  confirmLabel="Revert"
                  tone="secondary"
                  size="sm"
                  onConfirm={() =>
                    connection.call('skills-v1/revert', { name, version: v.version }).then(() => {
                      props.onReverted(v.version);
                      versions.reload();
                    }, setError)
                  }
                />
              ) : null}
            </span>
          </li>
        ))}
      </ul>
      {diff ? (
        <div class="skill-diff-view">
          <div class="admin-inline">
            <strong>
              Version {diff.version - 1} → {diff.version}
            </strong>
            <button type="button" class="btn btn-ghost btn-sm" onClick={() => setDiff(null)}>
              Close
            </button>
          </div>
          <pre class="skill-diff">
            {diff.lines.map((line, i) => (
              <span key={i} class={line.startsWith('+') && !line.startsWith('+++') ? 'diff-add' : line.startsWith('-') && !line.startsWith('---') ? 'diff-remove' : line.startsWith('@@') ? 'diff-hunk' : undefined}>
                {line}
                {'\n'}
              </span>
            ))}
          </pre>
          {diff.truncated ? <p class="admin-muted">The changes are too long to show whole; download the .zip to see everything.</p> : null}
          {diff.lines.length === 0 ? <p class="admin-muted">Nothing changed.</p> : null}
        </div>
      ) : null}
    </details>
  );
}
