/**
 * An agent's memories, inside its row in Agents: search, filter by site, edit the text
 * and site, pin (essential: in every turn), delete one or all, and where each came from
 * (`remember` in which thread, the review of which threads, browsing steps) and whose it
 * is (the team's or one member's). The host decides what each person reaches: owners and
 * admins every memory; a member their own and those of threads they can read.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { EVENT, type RouteResult } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';

type MemoryView = RouteResult<'agent-memories-v1/list'>['memories'][number];
const PAGE = 50;

/** Where a memory came from, in words; `titles` names the threads the viewer can read. */
export function provenance(memory: MemoryView, titles: ReadonlyMap<string, string>): string {
  const named = memory.source.threadIds.map((id) => (titles.has(id) ? `“${titles.get(id)}”` : 'a thread you cannot open'));
  const where = named.length ? named.join(', ') : '';
  const whose = memory.scope === 'member' ? 'Private to one member' : "The team's";
  if (memory.source.kind === 'remember') return `${whose} · kept by the agent with remember${where ? ` in ${where}` : ''}`;
  if (memory.source.kind === 'review') return `${whose} · from the memory review of ${where || 'browsing steps'}`;
  return `${whose} · written by a person`;
}

export function AgentMemories(props: { connection: HostConnection; agentId: string; canDeleteAll: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="agent-memories" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Memories</summary>
      {open ? <MemoryList {...props} /> : null}
    </details>
  );
}

function MemoryList(props: { connection: HostConnection; agentId: string; canDeleteAll: boolean }) {
  const { connection, agentId } = props;
  const [text, setText] = useState('');
  const [site, setSite] = useState('');
  const [offset, setOffset] = useState(0);
  const [error, setError] = useState<unknown>(null);
  const [confirmAll, setConfirmAll] = useState(false);
  const args = { agentId, offset, limit: PAGE, ...(text.trim() ? { text: text.trim() } : {}), ...(site.trim() ? { site: site.trim() } : {}) };
  const page = useHostLoad(connection, 'agent-memories-v1/list', args, [EVENT.memoriesChanged]);
  const threads = useHostLoad(connection, 'threads-v1/list', { agentId }, [EVENT.threadsChanged]);
  const titles = new Map((threads.data?.threads ?? []).map((t) => [t.id, t.title] as const));
  const run = (call: Promise<unknown>) => {
    setError(null);
    call.then(() => page.reload(), setError);
  };
  const total = page.data?.total ?? 0;
  return (
    <div class="memory-list">
      <div class="memory-filters">
        <input type="search" aria-label="Search memories" placeholder="Search memories" value={text} onInput={(e) => (setText(e.currentTarget.value), setOffset(0))} />
        <input aria-label="Only this site" placeholder="Only this site (example.com)" value={site} onInput={(e) => (setSite(e.currentTarget.value), setOffset(0))} />
      </div>
      {page.error ? <Banner tone="error">{describeError(page.error)}</Banner> : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      {page.data ? (
        <p class="admin-muted" aria-live="polite">
          {total === 0 ? 'No memories here.' : `${total} ${total === 1 ? 'memory' : 'memories'}${total > PAGE ? `, ${offset + 1}–${Math.min(offset + PAGE, total)} shown` : ''}`}
        </p>
      ) : null}
      <ul class="admin-list">
        {(page.data?.memories ?? []).map((memory) => (
          <MemoryRow key={`${memory.id}:${memory.updatedAt ?? ''}`} memory={memory} titles={titles} connection={connection} agentId={agentId} run={run} />
        ))}
      </ul>
      <div class="admin-inline">
        {offset > 0 ? (
          <button type="button" class="btn btn-ghost btn-sm" onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Newer
          </button>
        ) : null}
        {offset + PAGE < total ? (
          <button type="button" class="btn btn-ghost btn-sm" onClick={() => setOffset(offset + PAGE)}>
            Older
          </button>
        ) : null}
        {props.canDeleteAll && total > 0 ? (
          confirmAll ? (
            <>
              <span>Forget all of this agent's memories?</span>
              <button type="button" class="btn btn-danger btn-sm" onClick={() => (setConfirmAll(false), run(connection.call('agent-memories-v1/delete_all', { agentId })))}>
                Forget all
              </button>
              <button type="button" class="btn btn-ghost btn-sm" onClick={() => setConfirmAll(false)}>
                Keep them
              </button>
            </>
          ) : (
            <button type="button" class="btn btn-danger btn-sm" onClick={() => setConfirmAll(true)}>
              Delete all…
            </button>
          )
        ) : null}
      </div>
    </div>
  );
}

function MemoryRow(props: { memory: MemoryView; titles: ReadonlyMap<string, string>; connection: HostConnection; agentId: string; run: (call: Promise<unknown>) => void }) {
  const { memory, connection, agentId, run } = props;
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(memory.text);
  const [site, setSite] = useState(memory.site ?? '');
  const ref = { agentId, memoryId: memory.id };
  const save = (event: Event) => {
    event.preventDefault();
    setEditing(false);
    run(connection.call('agent-memories-v1/edit', { ...ref, text: text.trim(), site: site.trim() || null }));
  };
  return (
    <li class="admin-row memory-row" data-memory={memory.id}>
      {editing ? (
        <form class="admin-form" onSubmit={save}>
          <label>
            Memory
            <textarea rows={3} value={text} maxLength={2000} onInput={(e) => setText(e.currentTarget.value)} />
          </label>
          <label>
            Site (empty: every page)
            <input value={site} placeholder="example.com" onInput={(e) => setSite(e.currentTarget.value)} />
          </label>
          <div class="admin-inline">
            <button type="submit" class="btn btn-primary btn-sm" disabled={!text.trim()}>
              Save memory
            </button>
            <button type="button" class="btn btn-ghost btn-sm" onClick={() => (setEditing(false), setText(memory.text), setSite(memory.site ?? ''))}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <p class="memory-text">
            {memory.pinned ? <span class="memory-pin">Essential</span> : null}
            {memory.site ? <span class="memory-site">{memory.site}</span> : null}
            {memory.text}
          </p>
          <p class="admin-muted memory-source">
            {provenance(memory, props.titles)} · used {memory.uses} {memory.uses === 1 ? 'time' : 'times'}
            {memory.updatedAt ? ' · edited' : ''}
          </p>
          <div class="admin-inline">
            <button type="button" class="btn btn-secondary btn-sm" onClick={() => setEditing(true)}>
              Edit
            </button>
            <button type="button" class="btn btn-secondary btn-sm" aria-pressed={memory.pinned} onClick={() => run(connection.call('agent-memories-v1/pin', { ...ref, pinned: !memory.pinned }))}>
              {memory.pinned ? 'Unpin' : 'Pin as essential'}
            </button>
            <button type="button" class="btn btn-danger btn-sm" onClick={() => run(connection.call('agent-memories-v1/delete', ref))}>
              Delete
            </button>
          </div>
        </>
      )}
    </li>
  );
}
