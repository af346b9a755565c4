/**
 * An agent's workspace: its folders and files, to open, download, upload into and delete
 * (`workspace-v1`). The bytes of a download stay in memory until the browser saves them.
 * A large folder comes a page at a time: the first, then the next on "Show more".
 */

import { useRef, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import { uploadToWorkspace } from '../../host/attachments';
import type { HostConnection } from '../../host/connection';
import type { RouteResult } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import type { AgentView } from './ChatPanel';

type Listing = RouteResult<'workspace-v1/list'>;

/** The pages loaded after ``first`` (the listing's first page), and the latest total. */
interface MorePages {
  first: Listing | null;
  entries: Listing['entries'];
  total: number;
}

/** A path inside the workspace: the folder's path and the entry's name. */
export function childPath(folder: string, name: string): string {
  return folder ? `${folder}/${name}` : name;
}

/** The folder above ``folder`` (the workspace's top for a top-level folder). */
export function parentPath(folder: string): string {
  return folder.includes('/') ? folder.slice(0, folder.lastIndexOf('/')) : '';
}

async function download(connection: HostConnection, agentId: string, path: string): Promise<Blob> {
  const parts: BlobPart[] = [];
  let offset = 0;
  for (;;) {
    const chunk = await connection.call('workspace-v1/download', { agentId, path, offset });
    const bytes = Uint8Array.from(atob(chunk.data), (c) => c.charCodeAt(0));
    parts.push(bytes);
    offset += bytes.length;
    if (chunk.eof || bytes.length === 0) break;
  }
  return new Blob(parts, { type: 'application/octet-stream' });
}

export function WorkspacePanel({ connection, agents }: { connection: HostConnection; agents: AgentView[] }) {
  const [chosen, setAgentId] = useState<string | null>(null);
  // Until one is chosen, the first agent's (the list may load after this panel).
  const agentId = agents.some((a) => a.id === chosen) ? chosen : (agents[0]?.id ?? null);
  const [folder, setFolder] = useState('');
  const [error, setError] = useState<unknown>(null);
  const picker = useRef<HTMLInputElement>(null);
  const listing = useHostLoad(agentId ? connection : null, 'workspace-v1/list', { agentId: agentId ?? '', path: folder }, []);
  const [more, setMore] = useState<MorePages>({ first: null, entries: [], total: 0 });
  const [loadingMore, setLoadingMore] = useState(false);
  // Pages loaded after the first belong to it: a reload or another folder drops them.
  const later = listing.data && more.first === listing.data ? more : null;
  const entries = listing.data ? [...listing.data.entries, ...(later?.entries ?? [])] : [];
  const total = later?.total ?? listing.data?.total ?? 0;
  const showMore = () => {
    const first = listing.data;
    if (!first || !agentId) return;
    setError(null);
    setLoadingMore(true);
    connection.call('workspace-v1/list', { agentId, path: folder, offset: entries.length }).then(
      (page) => {
        setLoadingMore(false);
        setMore((held) => ({
          first,
          entries: [...(held.first === first ? held.entries : []), ...page.entries],
          total: page.total,
        }));
      },
      (failure: unknown) => {
        setLoadingMore(false);
        setError(failure);
      },
    );
  };
  const run = (work: Promise<unknown>) => {
    setError(null);
    work.then(listing.reload, setError);
  };
  const save = (name: string) =>
    run(
      download(connection, agentId!, childPath(folder, name)).then((blob) => {
        const link = document.createElement('a');
        link.href = URL.createObjectURL(blob);
        link.download = name;
        link.click();
        URL.revokeObjectURL(link.href);
      }),
    );
  return (
    <section class="admin-panel card card-body" aria-label="Workspace">
      <h2>Workspace</h2>
      <label class="admin-field">
        Agent
        <select
          value={agentId ?? ''}
          onChange={(e) => {
            setAgentId(e.currentTarget.value);
            setFolder('');
          }}
        >
          {agents.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
      </label>
      {agentId ? (
        <>
          <div class="admin-inline workspace-folder">
            <span class="admin-muted">/{folder}</span>
            {folder ? (
              <button type="button" class="btn btn-ghost btn-sm" onClick={() => setFolder(parentPath(folder))}>
                Up
              </button>
            ) : null}
            <input
              ref={picker}
              type="file"
              multiple
              hidden
              onChange={(e) => {
                const files = [...(e.currentTarget.files ?? [])];
                run(Promise.all(files.map((file) => uploadToWorkspace(connection, agentId, file, folder))));
              }}
            />
            <button type="button" class="btn btn-secondary btn-sm" onClick={() => picker.current?.click()}>
              Upload
            </button>
          </div>
          {error || listing.error ? <Banner tone="error">{describeError(error ?? listing.error)}</Banner> : null}
          <ul class="admin-list" aria-label="Files">
            {entries.map((entry) => (
              <li key={entry.name} class="admin-row workspace-entry">
                <span class="workspace-name">
                  {entry.kind === 'folder' ? (
                    <button type="button" class="btn btn-ghost btn-sm" onClick={() => setFolder(childPath(folder, entry.name))}>
                      {entry.name}/
                    </button>
                  ) : (
                    <span>{entry.name}</span>
                  )}
                  {entry.kind === 'file' ? <span class="admin-muted">{entry.size.toLocaleString()} bytes</span> : null}
                </span>
                {entry.kind === 'file' ? (
                  <button type="button" class="btn btn-ghost btn-sm workspace-download" onClick={() => save(entry.name)}>
                    Download
                  </button>
                ) : null}
                <ConfirmButton
                  label="Delete"
                  size="sm"
                  question={entry.kind === 'folder' ? `Delete ${entry.name}/ and everything in it?` : `Delete ${entry.name}?`}
                  confirmLabel="Delete for good"
                  onConfirm={() => run(connection.call('workspace-v1/delete', { agentId, path: childPath(folder, entry.name) }))}
                />
              </li>
            ))}
          </ul>
          {listing.data && entries.length < total ? (
            <button type="button" class="btn btn-secondary btn-sm" disabled={loadingMore} onClick={showMore}>
              Show more
            </button>
          ) : null}
          {listing.data && entries.length === 0 ? <p class="empty">No files here.</p> : null}
        </>
      ) : (
        <p class="empty">No agents yet.</p>
      )}
    </section>
  );
}
