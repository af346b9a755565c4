/**
 * Chat with the team's agents: the agents, each agent's threads (mine and the team's
 * shared ones), and one conversation streaming as the agent works. What the person has
 * chosen and typed lives in the host screen's memory, so a reconnect keeps it.
 */

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { describeCode, describeError } from '../../error-messages';
import { addFiles, readPreview, safePreviewUrl, uploadToWorkspace, type PendingFile } from '../../host/attachments';
import type { AttentionRequest } from '../../host/attention';
import type { ChatMemory } from '../../host/chat-memory';
import {
  budgetRefusal,
  chatAfterEvent,
  chatFromContents,
  chatRetrying,
  chatWithDelivery,
  chatWithQueued,
  chatWithSending,
  needsProviderKey,
  stoppedByBudget,
  taskProgress,
  tokenUsage,
  toolDetail,
  turnStatusText,
  waitingText,
  writerOf,
  type ChatItem,
  type ChatState,
  type QueuedItem,
  type SentAttachment,
  type ToolItem,
  type UserItem,
} from '../../host/chat-stream';
import { HostCallError, type HostConnection } from '../../host/connection';
import { EndFollower } from '../../host/follow-end';
import { EVENT, type RouteResult } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { ErrorBoundary } from '../ErrorBoundary';
import { Loading } from '../Loading';
import { AttentionCards, type AlwaysAllow } from './AttentionCards';
import { DelegationLinks, linksAfterEvent, type ChatLink } from './DelegationLinks';
import { Markdown } from './Markdown';

export type AgentView = RouteResult<'agents-v1/list'>['agents'][number];
type ListedThread = RouteResult<'threads-v1/list'>['threads'][number];
type ThreadView = RouteResult<'threads-v1/get'>['thread'];

export interface ChatSelection {
  agentId: string | null;
  threadId: string | null;
}

const OUTCOME_TEXT: Record<ToolItem['outcome'], string> = {
  running: 'running',
  ok: 'ok',
  refused: 'refused',
  error: 'error',
  notVerified: 'NOT VERIFIED',
  mismatch: 'MISMATCH',
};

/** The host's codes for a chat that is not there for this person (deleted, or no longer shared). */
const GONE_CODES: ReadonlySet<string> = new Set(['threadNotFound', 'agentNotFound']);

export function ChatPanel(props: {
  connection: HostConnection;
  meId: string;
  agents: AgentView[];
  /** The agents' list has come (until then a chosen agent is not missing, only not yet listed). */
  agentsLoaded?: boolean;
  agentsError: unknown;
  /** Members' names by account id (the hub's list), for who wrote a message. */
  memberNames?: ReadonlyMap<string, string>;
  memory: ChatMemory;
  selection: ChatSelection;
  onSelection: (selection: ChatSelection) => void;
  requests: AttentionRequest[];
  alwaysAllow: AlwaysAllow | null;
  /** An owner or admin: may save a secret to the vault and add a requested item. */
  manager: boolean;
  onWatch: ((tabId: string) => void) | null;
  /** Opens the Providers tab (for an owner or admin, who can set a key there). */
  onProviders: (() => void) | null;
  /** Opens Usage → Budgets (for an owner or admin, who can raise a spent budget there). */
  onBudgets: (() => void) | null;
}) {
  const { connection, agents, selection } = props;
  const agent = agents.find((a) => a.id === selection.agentId) ?? null;
  const agentNames = useMemo(() => new Map(agents.map((a) => [a.id, a.name] as const)), [agents]);
  // Why the chat the address (or a link) named is not open: it went, or is no longer shared.
  const [notice, setNotice] = useState<string | null>(null);
  const agentsLoaded = props.agentsLoaded ?? true;
  const agentGone = agentsLoaded && !props.agentsError && selection.agentId !== null && agent === null;
  useEffect(() => {
    if (!agentGone) return;
    setNotice('That agent no longer exists.');
    props.onSelection({ agentId: null, threadId: null });
  }, [agentGone]);
  const choose = (next: ChatSelection) => {
    setNotice(null);
    props.onSelection(next);
  };
  if (props.agentsError) return <Banner tone="error">{describeError(props.agentsError)}</Banner>;
  return (
    <div class={`chat-layout${selection.threadId ? ' has-thread' : ''}`}>
      <nav class="chat-side card" aria-label="Agents and chats">
        <h2 class="chat-side-title">Agents</h2>
        {notice ? <Banner tone="info">{notice}</Banner> : null}
        {agents.length === 0 ? <p class="empty">No agents yet. An admin or an owner can create one.</p> : null}
        <ul class="chat-agents">
          {agents.map((a) => (
            <li key={a.id}>
              <button type="button" class={`chat-agent${a.id === agent?.id ? ' is-selected' : ''}`} aria-current={a.id === agent?.id} onClick={() => choose({ agentId: a.id, threadId: null })}>
                {a.name}
              </button>
            </li>
          ))}
        </ul>
        {agent ? <ThreadList connection={connection} agent={agent} meId={props.meId} selected={selection.threadId} onSelect={(threadId) => choose({ agentId: agent.id, threadId })} /> : null}
      </nav>
      <section class="chat-main card">
        {selection.threadId && agent ? (
          <Conversation
            key={selection.threadId}
            connection={connection}
            agent={agent}
            threadId={selection.threadId}
            memory={props.memory}
            requests={props.requests.filter((r) => r.threadId === selection.threadId)}
            agentNames={agentNames}
            alwaysAllow={props.alwaysAllow}
            manager={props.manager}
            meId={props.meId}
            memberNames={props.memberNames ?? NO_NAMES}
            onBack={() => choose({ agentId: agent.id, threadId: null })}
            onGone={(why) => {
              setNotice(why);
              props.onSelection({ agentId: agent.id, threadId: null });
            }}
            onOpenChat={(link) => choose(link)}
            onWatch={props.onWatch}
            onProviders={props.onProviders}
            onBudgets={props.onBudgets}
          />
        ) : (
          <div class="view-empty">
            <p>{agent ? 'Choose a chat or start a new one.' : 'Choose an agent to chat with.'}</p>
          </div>
        )}
      </section>
    </div>
  );
}

function ThreadList(props: { connection: HostConnection; agent: AgentView; meId: string; selected: string | null; onSelect: (threadId: string) => void }) {
  // A turn's end changes the unread counts.
  const threads = useHostLoad(props.connection, 'threads-v1/list', { agentId: props.agent.id }, [EVENT.threadsChanged, EVENT.turnFinished]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const start = () => {
    setBusy(true);
    setError(null);
    props.connection.call('threads-v1/start', { agentId: props.agent.id }).then(
      (thread) => {
        setBusy(false);
        threads.reload();
        props.onSelect(thread.id);
      },
      (failure: unknown) => {
        setBusy(false);
        setError(failure);
      },
    );
  };
  const list = threads.data?.threads ?? [];
  const mine = list.filter((t) => t.createdBy === props.meId);
  const shared = list.filter((t) => t.createdBy !== props.meId);
  const group = (title: string, items: ListedThread[]) =>
    items.length ? (
      <>
        <h3 class="chat-group">{title}</h3>
        <ul class="chat-threads">
          {items.map((t) => (
            <li key={t.id}>
              <button type="button" class={`chat-thread${t.id === props.selected ? ' is-selected' : ''}`} aria-current={t.id === props.selected} onClick={() => props.onSelect(t.id)}>
                {t.title || 'New chat'}
                {t.shared ? <span class="badge">shared</span> : null}
                {/* The open chat is being read: its count is not news. */}
                {t.unread > 0 && t.id !== props.selected ? (
                  <span class="badge badge-unread" aria-label={`${t.unread} unread`}>
                    {t.unread}
                  </span>
                ) : null}
              </button>
            </li>
          ))}
        </ul>
      </>
    ) : null;
  return (
    <div class="chat-thread-list" aria-busy={threads.data === null && !threads.error}>
      <button type="button" class="btn btn-primary btn-sm" disabled={busy} onClick={start}>
        New chat
      </button>
      {error || threads.error ? <Banner tone="error">{describeError(error ?? threads.error)}</Banner> : null}
      {group('My chats', mine)}
      {group('Shared with the team', shared)}
    </div>
  );
}

const NO_NAMES: ReadonlyMap<string, string> = new Map();

let localKeys = 0;
const nextKey = () => `local${++localKeys}`;

function Conversation(props: {
  connection: HostConnection;
  agent: AgentView;
  threadId: string;
  memory: ChatMemory;
  requests: AttentionRequest[];
  agentNames: ReadonlyMap<string, string>;
  alwaysAllow: AlwaysAllow | null;
  manager: boolean;
  meId: string;
  memberNames: ReadonlyMap<string, string>;
  onBack: () => void;
  /** The chat is not there for this person (deleted, or no longer shared): `why`, in words. */
  onGone: (why: string) => void;
  /** Opens a chat an agent of this one asked, or the one that asked it. */
  onOpenChat: (link: ChatLink) => void;
  onWatch: ((tabId: string) => void) | null;
  onProviders: (() => void) | null;
  onBudgets: (() => void) | null;
}) {
  const { connection, threadId, memory } = props;
  const [chat, setChat] = useState<ChatState | null>(null);
  const [asked, setAsked] = useState<ChatLink[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [thread, setThread] = useState<ThreadView | null>(null);
  const chatRef = useRef<ChatState | null>(null);
  chatRef.current = chat;
  // The conversation follows its newest item unless the person scrolled up to read.
  const itemsList = useRef<HTMLOListElement>(null);
  const follower = useRef(new EndFollower());
  const follow = () => {
    const box = itemsList.current;
    if (!box) return;
    if (follower.current.changed()) box.scrollTop = box.scrollHeight;
    follower.current.settled(box);
  };
  useLayoutEffect(follow, [chat?.items, props.requests.length]);
  // A resized window (or a rotated phone) keeps the end in view while the person follows it.
  const hasList = chat !== null;
  useEffect(() => {
    const box = itemsList.current;
    if (!box || typeof ResizeObserver === 'undefined') return undefined;
    const observer = new ResizeObserver(follow);
    observer.observe(box);
    return () => observer.disconnect();
  }, [hasList]);

  useEffect(() => {
    // Events that arrive while the thread loads are applied once it has.
    const early: Parameters<typeof chatAfterEvent>[1][] = [];
    let loaded = false;
    const off = connection.onEvent((event) => {
      if (event.event === EVENT.threadsChanged && (event.data as { threadId?: string }).threadId === threadId) {
        // Titled by its first message, renamed or shared: the header follows.
        connection.call('threads-v1/get', { threadId }).then((contents) => setThread(contents.thread), () => undefined);
      }
      setAsked((old) => linksAfterEvent(old, event, threadId));
      if (!loaded) early.push(event);
      else setChat((old) => (old ? chatAfterEvent(old, event, props.meId) : old));
      if (event.event === EVENT.turnFinished && (event.data as { threadId?: string }).threadId === threadId) {
        // The person has the chat open: what the agent said is read.
        connection.call('threads-v1/mark-read', { threadId }).catch(() => undefined);
      }
    });
    connection.call('threads-v1/get', { threadId }).then(
      (contents) => {
        if (contents.thread.agentId !== props.agent.id) {
          // An address that pairs the thread with another agent names no chat of this one.
          props.onGone(describeCode('threadNotFound', 'host'));
          return;
        }
        let state = chatFromContents(contents);
        state = { ...state, items: [...state.items, ...memory.failed(threadId)] };
        state = early.reduce((so_far, event) => chatAfterEvent(so_far, event, props.meId), state);
        loaded = true;
        setThread(contents.thread);
        setAsked((old) => contents.delegations.reduce<ChatLink[]>((links, d) => (links.some((l) => l.threadId === d.threadId) ? links : [...links, d]), old));
        setChat(state);
      },
      (failure: unknown) => {
        if (failure instanceof HostCallError && GONE_CODES.has(failure.code)) props.onGone(describeError(failure));
        else setError(failure);
      },
    );
    return () => {
      off();
      // What did not go out stays, marked failed, for the next connection.
      const items = chatRef.current?.items.filter((item): item is UserItem => item.kind === 'user' && item.delivery !== 'sent') ?? [];
      memory.keepUnsent(threadId, items);
    };
  }, [connection, threadId, memory]);

  const deliver = (key: string, text: string, paths: string[]) => {
    connection.call('threads-v1/send', { threadId, text, attachments: paths.map((path) => ({ path })) }).then(
      (answer) => {
        memory.sent(key);
        // Sent while a turn ran, it waits in the queue until a turn takes it.
        setChat((old) => (old ? (answer.turnId === null ? chatWithQueued(old, key) : chatWithDelivery(old, key, null)) : old));
      },
      (failure: unknown) => {
        // A spent budget's refusal names the budget and who can raise it: the host's sentence.
        const budget = budgetRefusal(failure, describeCode('budgetExceeded', 'host'));
        setChat((old) => (old ? chatWithDelivery(old, key, budget ?? describeError(failure), budget !== null) : old));
      },
    );
  };
  // The files are uploaded once; a retry uploads only what did not go up yet, then sends.
  const upload = async (key: string, text: string): Promise<void> => {
    const kept = memory.filesOf(key);
    let paths = kept.paths;
    if (paths === null) {
      try {
        paths = await Promise.all(kept.files.map((file) => uploadToWorkspace(connection, props.agent.id, file, 'uploads')));
      } catch (failure) {
        setChat((old) => (old ? chatWithDelivery(old, key, describeError(failure)) : old));
        return;
      }
      memory.setFiles(key, kept.files, paths);
    }
    deliver(key, text, paths);
  };
  const send = async (text: string, files: PendingFile[]): Promise<void> => {
    const key = nextKey();
    const attachments: SentAttachment[] = files.map((f) => ({ name: f.file.name, sha256: null, preview: false }));
    memory.setFiles(
      key,
      files.map((f) => f.file),
      null,
    );
    setChat((old) => (old ? chatWithSending(old, key, text, attachments, props.meId) : old));
    await upload(key, text);
  };
  const retry = (key: string) => {
    const retrying = chat ? chatRetrying(chat, key) : null;
    if (!retrying) return;
    setChat(retrying.state);
    void upload(key, retrying.item.text);
  };
  // Only the one who started a chat shares it with the team or makes it private again.
  const share = (shared: boolean) => {
    setError(null);
    connection.call('threads-v1/share', { threadId, shared }).then(setThread, setError);
  };
  const rename = (title: string) => {
    setError(null);
    connection.call('threads-v1/rename', { threadId, title }).then(setThread, setError);
  };
  const stop = () => void connection.call('threads-v1/stop', { threadId }).catch((failure: unknown) => setError(failure));

  if (error && !chat) return <Banner tone="error">{describeError(error)}</Banner>;
  if (!chat) return <Loading />;
  // Another member's message carries their name and sits apart from the viewer's own.
  const writerName = (item: UserItem): string | null => {
    const writer = writerOf(item, thread, props.meId);
    return writer === props.meId ? null : (props.memberNames.get(writer) ?? 'Another member');
  };
  const running = chat.runningTurnId !== null;
  const last = chat.turns[chat.turns.length - 1];
  const usage = tokenUsage(chat);
  const progress = taskProgress(chat.tasks);
  return (
    <div class="conversation">
      <header class="conversation-header">
        <button type="button" class="btn btn-ghost btn-sm chat-back" onClick={props.onBack}>
          Back
        </button>
        <h2>{props.agent.name}</h2>
        {thread ? <ThreadTitle title={thread.title} editable={thread.createdBy === props.meId} onRename={rename} /> : null}
        <div class="conversation-actions">
          {chat.tabId && props.onWatch ? (
            <button type="button" class="btn btn-secondary btn-sm" aria-label="Watch the agent's tab live" onClick={() => props.onWatch?.(chat.tabId!)}>
              Watch live
            </button>
          ) : null}
          {thread && thread.createdBy === props.meId ? (
            <button type="button" class="btn btn-ghost btn-sm" aria-pressed={thread.shared} onClick={() => share(!thread.shared)}>
              {thread.shared ? 'Make private' : 'Share with the team'}
            </button>
          ) : thread?.shared ? (
            <span class="badge">shared</span>
          ) : null}
          <span class="conversation-usage" title="Tokens used in this chat">
            {usage.input + usage.output > 0 ? `${usage.input.toLocaleString()} in · ${usage.output.toLocaleString()} out` : null}
          </span>
        </div>
      </header>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <DelegationLinks
        askedBy={thread?.parentThreadId && thread.parentAgentId ? { threadId: thread.parentThreadId, agentId: thread.parentAgentId } : null}
        asked={asked}
        agentNames={props.agentNames}
        onOpen={props.onOpenChat}
      />
      {chat.tasks.length ? (
        <details class="conversation-tasks">
          <summary>
            Tasks: {progress.done} of {progress.total} done
          </summary>
          <ul>
            {chat.tasks.map((task) => (
              <li key={task.id} data-status={task.status}>
                {task.status === 'completed' ? '✓' : task.status === 'in_progress' ? '…' : '○'} {task.subject}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {chat.subAgents.length ? (
        <ul class="conversation-subagents" aria-label="Sub-agents">
          {chat.subAgents.map((sub) => (
            <li key={sub.id}>
              <strong>{sub.description}</strong> ({sub.type}): {sub.status ? sub.status : sub.lastTool ? `using ${sub.lastTool}` : 'working'}
            </li>
          ))}
        </ul>
      ) : null}
      <ol class="conversation-items" aria-live="polite" ref={itemsList} onScroll={(event) => follower.current.scrolled(event.currentTarget)}>
        {chat.items.map((item) => (
          <ChatRow key={item.key} item={item} connection={connection} threadId={threadId} writer={item.kind === 'user' ? writerName(item) : null} onRetry={retry} onBudgets={props.onBudgets} />
        ))}
      </ol>
      {chat.queued.length ? <QueuedMessages connection={connection} threadId={threadId} meId={props.meId} queued={chat.queued} onError={setError} /> : null}
      <AttentionCards connection={connection} requests={props.requests} agentNames={props.agentNames} alwaysAllow={props.alwaysAllow} manager={props.manager} />
      <div class="conversation-status" role="status" data-turn-status={running ? 'running' : (last?.status ?? 'none')}>
        {!running && last?.status === 'error' ? (
          <Banner tone="error">
            {turnStatusText(last)}
            {needsProviderKey(last) && props.onProviders ? (
              <>
                {' '}
                <button type="button" class="link-button" onClick={props.onProviders}>
                  Set a key on the Providers tab
                </button>
              </>
            ) : null}
          </Banner>
        ) : !running && last && stoppedByBudget(last) ? (
          <Banner tone="error">
            <span class="budget-sentence">{last.reason ? turnStatusText(last) : `${turnStatusText(last)}. ${describeCode('budgetExceeded', 'host')}`}</span>
            {props.onBudgets ? <OpenBudgets onBudgets={props.onBudgets} /> : null}
          </Banner>
        ) : running && chat.waiting !== null ? (
          <span data-waiting>{waitingText(chat.waiting)}</span>
        ) : running ? (
          'Working…'
        ) : last ? (
          turnStatusText(last)
        ) : (
          ''
        )}
      </div>
      <Composer threadId={threadId} memory={memory} running={running} onSend={send} onStop={stop} />
    </div>
  );
}

/** Messages waiting for the running turn to end; their sender may edit, steer or cancel
 * each until a turn takes it. */
function QueuedMessages(props: { connection: HostConnection; threadId: string; meId: string; queued: QueuedItem[]; onError: (failure: unknown) => void }) {
  const { connection, threadId } = props;
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const call = (promise: Promise<unknown>) => void promise.catch(props.onError);
  return (
    <ol class="chat-queue" aria-label="Queued messages">
      {props.queued.map((q) => {
        const mine = q.accountId === props.meId;
        const ref = { threadId, id: q.id };
        if (editing?.id === q.id) {
          const save = (event: Event) => {
            event.preventDefault();
            const text = editing.text.trim();
            if (text) call(connection.call('threads-v1/queue-edit', { ...ref, text }));
            setEditing(null);
          };
          return (
            <li key={q.id} class="chat-queued is-editing">
              <form onSubmit={save}>
                <textarea aria-label="Queued message" rows={2} value={editing.text} onInput={(e) => setEditing({ id: q.id, text: e.currentTarget.value })} />
                <button type="submit" class="btn btn-primary btn-sm" disabled={!editing.text.trim()}>
                  Save
                </button>
                <button type="button" class="btn btn-ghost btn-sm" onClick={() => setEditing(null)}>
                  Cancel
                </button>
              </form>
            </li>
          );
        }
        return (
          <li key={q.id} class="chat-queued" data-steer={q.steer}>
            <span class="badge">{q.steer ? 'steering: read at the agent’s next step' : 'queued: sent when the agent finishes'}</span>
            <p class="chat-user-body">{q.text}</p>
            {q.attachments.length ? <span class="file-chip">{q.attachments.join(', ')}</span> : null}
            {mine ? (
              <span class="chat-queued-actions">
                <button type="button" class="btn btn-ghost btn-sm" onClick={() => setEditing({ id: q.id, text: q.text })}>
                  Edit
                </button>
                <button type="button" class="btn btn-ghost btn-sm" aria-pressed={q.steer} onClick={() => call(connection.call('threads-v1/queue-steer', { ...ref, steer: !q.steer }))}>
                  {q.steer ? 'Wait for the end' : 'Steer now'}
                </button>
                <button type="button" class="btn btn-ghost btn-sm" onClick={() => call(connection.call('threads-v1/queue-cancel', ref))}>
                  Remove
                </button>
              </span>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

/** The chat's title; its starter may rename it. */
function ThreadTitle(props: { title: string; editable: boolean; onRename: (title: string) => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  if (editing !== null) {
    const save = (event: Event) => {
      event.preventDefault();
      if (editing.trim()) props.onRename(editing.trim());
      setEditing(null);
    };
    return (
      <form class="conversation-rename" onSubmit={save}>
        <input type="text" aria-label="Chat title" maxLength={200} value={editing} onInput={(e) => setEditing(e.currentTarget.value)} autoFocus />
        <button type="submit" class="btn btn-primary btn-sm" disabled={!editing.trim()}>
          Save
        </button>
        <button type="button" class="btn btn-ghost btn-sm" onClick={() => setEditing(null)}>
          Cancel
        </button>
      </form>
    );
  }
  return (
    <>
      <span class="conversation-title">{props.title || 'New chat'}</span>
      {props.editable ? (
        <button type="button" class="btn btn-ghost btn-sm" onClick={() => setEditing(props.title)}>
          Rename
        </button>
      ) : null}
    </>
  );
}

/** The link from a budget's refusal to the Budgets editor, for owners and admins. */
function OpenBudgets({ onBudgets }: { onBudgets: () => void }) {
  return (
    <>
      {' '}
      <button type="button" class="link-button" onClick={onBudgets}>
        Open Budgets
      </button>
    </>
  );
}

function ChatRow(props: {
  item: ChatItem;
  connection: HostConnection;
  threadId: string;
  /** Who wrote a member's message, when not the viewer; null for the viewer's own. */
  writer: string | null;
  onRetry: (key: string) => void;
  onBudgets: (() => void) | null;
}) {
  const { item, connection, threadId, onRetry } = props;
  if (item.kind === 'text') {
    return (
      <li class="chat-row chat-agent-text">
        <ErrorBoundary fallback={<p class="chat-unrendered">{item.text}</p>} resetKey={item.text}>
          <Markdown text={item.text} />
        </ErrorBoundary>
      </li>
    );
  }
  if (item.kind === 'tool') {
    return (
      <li class={`chat-row tool-card tool-${item.outcome}`} data-outcome={item.outcome}>
        {item.description ? (
          <span class="tool-description">{item.description}</span>
        ) : (
          <>
            <code class="tool-name">{item.tool}</code>
            <span class="tool-target">{item.target}</span>
          </>
        )}
        <span class="tool-outcome">{OUTCOME_TEXT[item.outcome]}</span>
        {item.detail && item.outcome !== 'notVerified' && item.outcome !== 'mismatch' ? <ToolDetail detail={item.detail} /> : null}
        {item.description ? (
          // The host's sentence first; the raw call behind Details.
          <details class="tool-raw">
            <summary>Details</summary>
            <code class="tool-name">{item.tool}</code> <span class="tool-target">{item.target}</span>
          </details>
        ) : null}
      </li>
    );
  }
  return (
    <li class={`chat-row chat-user-text is-${item.delivery}${props.writer !== null ? ' is-others' : ''}`} data-delivery={item.delivery}>
      {props.writer !== null ? <span class="chat-writer">{props.writer}</span> : null}
      <p class="chat-user-body">{item.text}</p>
      {item.attachments.length ? (
        <ul class="chat-attachments">
          {item.attachments.map((a, i) => (
            <SentFile key={i} attachment={a} connection={connection} threadId={threadId} />
          ))}
        </ul>
      ) : null}
      {item.delivery === 'failed' ? (
        <p class="chat-failed" role="alert">
          Not sent. {item.failure}{' '}
          {item.budget && props.onBudgets ? <OpenBudgets onBudgets={props.onBudgets} /> : null}{' '}
          <button type="button" class="btn btn-secondary btn-sm" onClick={() => onRetry(item.key)}>
            Retry
          </button>
        </p>
      ) : null}
    </li>
  );
}

function ToolDetail({ detail }: { detail: string }) {
  const { code, text } = toolDetail(detail);
  return (
    <span class="tool-detail" data-code={code ?? undefined}>
      {text}
    </span>
  );
}

function SentFile({ attachment, connection, threadId }: { attachment: SentAttachment; connection: HostConnection; threadId: string }) {
  const [preview, setPreview] = useState<string | null>(null);
  useEffect(() => {
    if (!attachment.preview || !attachment.sha256) return;
    connection.call('threads-v1/attachment_preview', { threadId, sha256: attachment.sha256 }).then(
      (answer) => setPreview(safePreviewUrl(answer.dataUrl)),
      () => undefined,
    );
  }, [attachment.sha256]);
  return <li class="file-chip">{preview ? <img src={preview} alt={attachment.name} class="attachment-image" /> : attachment.name}</li>;
}

function Composer(props: { threadId: string; memory: ChatMemory; running: boolean; onSend: (text: string, files: PendingFile[]) => Promise<void>; onStop: () => void }) {
  const { threadId, memory } = props;
  const [text, setText] = useState(() => memory.draft(threadId));
  const [files, setFiles] = useState<PendingFile[]>([]);
  const [refused, setRefused] = useState<string[]>([]);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);

  const edit = (value: string) => {
    setText(value);
    memory.setDraft(threadId, value);
  };
  const add = (list: FileList | File[] | null | undefined) => {
    if (!list || list.length === 0) return;
    const result = addFiles(files, [...list], nextKey);
    setRefused(result.refused);
    setFiles(result.files);
    for (const pending of result.files.filter((f) => !files.includes(f))) {
      void readPreview(pending).then((preview) => preview && setFiles((old) => old.map((f) => (f.key === pending.key ? { ...f, preview } : f))));
    }
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const message = text.trim();
    if (!message) return;
    edit('');
    const sending = files;
    setFiles([]);
    setRefused([]);
    void props.onSend(message, sending);
  };
  return (
    <form
      class={`composer${dragging ? ' is-dragging' : ''}`}
      onSubmit={submit}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        add(e.dataTransfer?.files);
      }}
    >
      {files.length ? (
        <ul class="composer-files">
          {files.map((f) => (
            <li key={f.key} class="file-chip">
              {f.preview ? <img src={f.preview} alt="" class="attachment-thumb" /> : null}
              <span>{f.file.name}</span>
              <button type="button" class="btn btn-ghost btn-sm" aria-label={`Remove ${f.file.name}`} onClick={() => setFiles((old) => old.filter((o) => o.key !== f.key))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {refused.length ? <Banner tone="error">{refused.join(' ')}</Banner> : null}
      <textarea
        aria-label="Message"
        rows={3}
        value={text}
        placeholder="Write to the agent…"
        onInput={(e) => edit(e.currentTarget.value)}
        onPaste={(e) => {
          const pasted = e.clipboardData?.files;
          if (pasted && pasted.length) {
            e.preventDefault();
            add(pasted);
          }
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
        }}
      />
      <div class="composer-actions">
        <input ref={picker} type="file" multiple hidden onChange={(e) => add(e.currentTarget.files)} />
        <button type="button" class="btn btn-ghost btn-sm" onClick={() => picker.current?.click()}>
          Attach files
        </button>
        {props.running ? (
          <button type="button" class="btn btn-danger btn-sm" onClick={props.onStop}>
            Stop
          </button>
        ) : null}
        <button type="submit" class="btn btn-primary btn-sm" disabled={!text.trim()}>
          Send
        </button>
      </div>
    </form>
  );
}
