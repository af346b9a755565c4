/**
 * Agent templates (`agent-templates-v1`), for owners and admins: export an agent as one
 * `.crewhost-agent.zip` (its memories and workspace files only when ticked), import one
 * after a preview of what it brings and needs (the provider, model and MCP servers mapped
 * to the team's), and update an agent from a newer file after a preview of what changes.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import { base64 } from '../../host/attachments';
import { HostCallError, type HostConnection } from '../../host/connection';
import { Banner } from '../Banner';

/** Codes whose message names where (a file and line, a path, a reason): shown after the sentence. */
const SAYS_WHERE = new Set(['agentTemplateSecretFound', 'agentTemplateRefused', 'agentTemplateInvalid']);

/** The error for a person: its sentence, and where the host says it is. */
export function templateError(error: unknown): string {
  const sentence = describeError(error);
  return error instanceof HostCallError && SAYS_WHERE.has(error.code) ? `${sentence} ${error.message}` : sentence;
}

type Preview = Awaited<ReturnType<typeof previewOf>>;
type Mapping = { provider: string; model: string | null; keepModel: boolean; mcpServers: Record<string, string | null>; replaceSkills: boolean };

async function exportAgent(connection: HostConnection, agentId: string, memories: boolean, workspace: boolean): Promise<{ name: string; blob: Blob }> {
  const ready = await connection.call('agent-templates-v1/export', { agentId, includeMemories: memories, includeWorkspace: workspace });
  const parts: BlobPart[] = [];
  let offset = 0;
  for (;;) {
    const chunk = await connection.call('agent-templates-v1/download', { downloadId: ready.downloadId, offset });
    const bytes = Uint8Array.from(atob(chunk.data), (c) => c.charCodeAt(0));
    parts.push(bytes);
    offset += bytes.length;
    if (chunk.eof || bytes.length === 0) break;
  }
  return { name: ready.fileName, blob: new Blob(parts, { type: 'application/zip' }) };
}

async function uploadTemplate(connection: HostConnection, file: File): Promise<string> {
  const started = await connection.call('agent-templates-v1/upload_start', { size: file.size });
  const bytes = new Uint8Array(await file.arrayBuffer());
  for (let offset = 0; offset < bytes.length; offset += started.chunkBytes) {
    await connection.call('agent-templates-v1/upload_chunk', { uploadId: started.uploadId, offset, data: base64(bytes.subarray(offset, offset + started.chunkBytes)) });
  }
  return started.uploadId;
}

async function previewOf(connection: HostConnection, uploadId: string, agentId: string | null) {
  return connection.call('agent-templates-v1/preview', agentId ? { uploadId, agentId } : { uploadId });
}

/** The mapping the preview suggests: the matching provider, the template's model, the
 * team's MCP servers of the same names; the team's differing skills kept. */
export function suggestedMapping(preview: Preview): Mapping {
  return {
    provider: preview.provider.match ?? '',
    model: preview.provider.model ?? null,
    keepModel: true,
    mcpServers: Object.fromEntries(preview.mcpServers.map((m) => [m.name, m.match ?? null])),
    replaceSkills: false,
  };
}

/** The arguments of `import` or `update` for a mapping (a model left as the template's is left out). */
export function mappingArgs(mapping: Mapping) {
  return {
    provider: mapping.provider,
    mcpServers: mapping.mcpServers,
    skills: mapping.replaceSkills ? ('replace' as const) : ('keep' as const),
    ...(mapping.keepModel ? {} : { model: mapping.model }),
  };
}

function PreviewForm(props: { connection: HostConnection; preview: Preview; servers: { id: string; name: string }[]; verb: string; onConfirm: (mapping: Mapping) => void; onCancel: () => void }) {
  const { preview } = props;
  const [mapping, setMapping] = useState<Mapping>(suggestedMapping(preview));
  const chosen = preview.providers.find((p) => p.id === mapping.provider);
  const set = (change: Partial<Mapping>) => setMapping((old) => ({ ...old, ...change }));
  return (
    <form
      class="admin-form agent-template-preview"
      aria-label={`${props.verb} ${preview.name}`}
      onSubmit={(event) => {
        event.preventDefault();
        props.onConfirm(mapping);
      }}
    >
      <p>
        <strong>{preview.name}</strong> <span class="admin-muted">brings instructions ({preview.instructionsChars} characters)</span>
      </p>
      <ul class="agent-template-brings">
        {preview.skills.map((s) => (
          <li key={`skill-${s.name}`}>
            Skill {s.name} <span class="admin-muted">({s.status === 'new' ? 'new to the team' : s.status === 'same' ? 'the team has it' : "differs from the team's"})</span>
          </li>
        ))}
        {preview.routines.map((r) => (
          <li key={`routine-${r.name}`}>
            Routine {r.name} {r.enabled ? '' : <span class="admin-muted">(off)</span>}
          </li>
        ))}
        {preview.memories ? <li>{preview.memories} memories</li> : null}
        {preview.workspaceFiles ? (
          <li>
            {preview.workspaceFiles} workspace files ({preview.workspaceBytes} bytes)
          </li>
        ) : null}
      </ul>
      <label>
        Provider <span class="admin-muted">(the template used {preview.provider.name})</span>
        <select value={mapping.provider} required onChange={(e) => set({ provider: e.currentTarget.value })}>
          <option value="">Choose a provider</option>
          {preview.providers.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
              {p.usable ? '' : ' (not usable yet)'}
            </option>
          ))}
        </select>
      </label>
      <label>
        Model
        <input
          value={mapping.model ?? ''}
          list="agent-template-models"
          placeholder="The provider's default"
          onInput={(e) => set({ model: e.currentTarget.value.trim() || null, keepModel: false })}
        />
        <datalist id="agent-template-models">
          {(chosen?.models ?? []).map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>
      </label>
      {preview.mcpServers.map((need) => (
        <label key={need.name}>
          MCP server {need.name}
          <select value={mapping.mcpServers[need.name] ?? ''} onChange={(e) => set({ mcpServers: { ...mapping.mcpServers, [need.name]: e.currentTarget.value || null } })}>
            <option value="">None</option>
            {props.servers.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
      ))}
      {preview.skills.some((s) => s.status === 'differs') ? (
        <label>
          <input type="checkbox" checked={mapping.replaceSkills} onChange={(e) => set({ replaceSkills: e.currentTarget.checked })} />
          Replace the team's differing skills with the template's (a new version)
        </label>
      ) : null}
      {preview.conflicts.map((c) => (
        <Banner key={c} tone="info">
          {c}
        </Banner>
      ))}
      {preview.changes ? (
        <div class="agent-template-changes" aria-label="Changes">
          {preview.changes.length ? null : <p class="admin-muted">Nothing changes.</p>}
          {preview.changes.map((c) => (
            <div key={c.what}>
              <strong>{c.what}</strong>: {c.before} → {c.after}
              {c.diff ? <pre class="agent-template-diff">{c.diff}</pre> : null}
            </div>
          ))}
        </div>
      ) : null}
      <div class="admin-inline">
        <button type="submit" class="btn btn-primary btn-sm" disabled={!mapping.provider}>
          {props.verb}
        </button>
        <button type="button" class="btn btn-ghost btn-sm" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Choose a file, read its preview with the mapping, then import it (or update ``agentId``). */
function TemplateFromFile(props: { connection: HostConnection; agentId: string | null; label: string; verb: string }) {
  const { connection, agentId } = props;
  const [pending, setPending] = useState<{ uploadId: string; preview: Preview; servers: { id: string; name: string }[] } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const choose = (file: File | undefined) => {
    if (!file) return;
    setError(null);
    setDone(null);
    (async () => {
      const uploadId = await uploadTemplate(connection, file);
      const preview = await previewOf(connection, uploadId, agentId);
      const servers = preview.mcpServers.length ? (await connection.call('mcp-servers-v1/list', {})).servers : [];
      setPending({ uploadId, preview, servers });
    })().catch(setError);
  };
  const confirm = (mapping: Mapping) => {
    if (!pending) return;
    setError(null);
    const args = { uploadId: pending.uploadId, ...mappingArgs(mapping) };
    const call = agentId ? connection.call('agent-templates-v1/update', { ...args, agentId }) : connection.call('agent-templates-v1/import', args);
    call.then((made) => {
      setPending(null);
      setDone(`${agentId ? 'Updated' : 'Imported'} ${made.name}.`);
    }, setError);
  };
  return (
    <div class="agent-template-file">
      {pending ? (
        <PreviewForm connection={connection} preview={pending.preview} servers={pending.servers} verb={props.verb} onConfirm={confirm} onCancel={() => setPending(null)} />
      ) : (
        <label class="admin-field">
          {props.label}
          <input type="file" accept=".zip,application/zip" onChange={(e) => choose(e.currentTarget.files?.[0])} />
        </label>
      )}
      {done ? <Banner tone="success">{done}</Banner> : null}
      {error ? <Banner tone="error">{templateError(error)}</Banner> : null}
    </div>
  );
}

/** The section's "Import agent" control. */
export function AgentTemplateImport({ connection }: { connection: HostConnection }) {
  return (
    <details class="agent-template-import">
      <summary>Import agent…</summary>
      <TemplateFromFile connection={connection} agentId={null} label="Agent file (.crewhost-agent.zip)" verb="Import" />
    </details>
  );
}

/** One agent's Export… and Update from file… controls. */
export function AgentTemplateActions({ connection, agentId }: { connection: HostConnection; agentId: string }) {
  const [memories, setMemories] = useState(false);
  const [workspace, setWorkspace] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const save = () => {
    setError(null);
    setBusy(true);
    exportAgent(connection, agentId, memories, workspace)
      .then(({ name, blob }) => {
        const link = document.createElement('a');
        link.href = URL.createObjectURL(blob);
        link.download = name;
        link.click();
        URL.revokeObjectURL(link.href);
      }, setError)
      .finally(() => setBusy(false));
  };
  return (
    <div class="agent-templates">
      <details class="agent-template-export">
        <summary>Export…</summary>
        <p class="admin-muted">Keys, vault items, tokens and MCP secrets never go in the file; text that looks like a key stops the export.</p>
        <label>
          <input type="checkbox" checked={memories} onChange={(e) => setMemories(e.currentTarget.checked)} />
          Include the team's memories
        </label>
        <label>
          <input type="checkbox" checked={workspace} onChange={(e) => setWorkspace(e.currentTarget.checked)} />
          Include workspace files
        </label>
        <button type="button" class="btn btn-secondary btn-sm" disabled={busy} onClick={save}>
          Download
        </button>
        {error ? <Banner tone="error">{templateError(error)}</Banner> : null}
      </details>
      <details class="agent-template-update">
        <summary>Update from file…</summary>
        <TemplateFromFile connection={connection} agentId={agentId} label="Newer agent file" verb="Update" />
      </details>
    </div>
  );
}
