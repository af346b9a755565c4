/**
 * The team's MCP servers (`mcp-servers-v1`), for owners and admins: each server with its
 * status kept live from the host's events, add and edit (a command over stdio or an
 * address over HTTP; environment values and headers written, shown only as "set"),
 * Test connection, turn on or off, delete; its tools with what the server says of them
 * (hints, shown, never trusted) and the ones not offered with the reason; which agents
 * have it and which tools each runs without asking; and a sign-in through the live view
 * for a server that asks for one. Members are told why they see nothing.
 */

import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import {
  NEW_SERVER,
  addBody,
  agentAccess,
  agentSwitch,
  hintText,
  problemParts,
  replaceSecrets,
  secretKind,
  secretNames,
  startEdit,
  statusFromEvent,
  statusText,
  testOutcome,
  toolSwitch,
  updateBody,
  withLiveStatus,
  type McpServerForm,
  type McpServerView,
  type McpStatusEvent,
  type McpStatusView,
  type McpToolView,
  type SecretRow,
} from '../../host/mcp-servers';
import { cancelMcpSignIn, signInEnd, startMcpSignIn } from '../../host/mcp-sign-in';
import { EVENT, type Role } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { Loading } from '../Loading';

export const MEMBER_REASON = 'Only admins and owners manage the team’s MCP servers.';

export interface McpAgent {
  id: string;
  name: string;
}

/** The live view of a tab (the sign-in page), or a line while it opens; `onClose` leaves it. */
export type ShowTab = (tabId: string, onClose: () => void) => ComponentChildren;

export function McpServersAdmin(props: { connection: HostConnection; role: Role; agents: readonly McpAgent[]; signInServed: boolean; showTab: ShowTab }) {
  if (props.role === 'member') {
    return (
      <section class="admin-panel card card-body" aria-label="MCP servers">
        <h2>MCP servers</h2>
        <Banner tone="info">{MEMBER_REASON}</Banner>
      </section>
    );
  }
  return <ServersPanel {...props} />;
}

function ServersPanel(props: { connection: HostConnection; agents: readonly McpAgent[]; signInServed: boolean; showTab: ShowTab }) {
  const { connection } = props;
  const list = useHostLoad(connection, 'mcp-servers-v1/list', {}, [EVENT.mcpServersChanged]);
  // Statuses told since the list loaded; a new list starts afresh.
  const [live, setLive] = useState<ReadonlyMap<string, McpStatusView>>(new Map());
  useEffect(() => setLive(new Map()), [list.data]);
  useEffect(
    () =>
      connection.onEvent((event) => {
        if (event.event !== EVENT.mcpServerStatus) return;
        const data = event.data as McpStatusEvent;
        setLive((old) => new Map(old).set(data.serverId, statusFromEvent(data)));
      }),
    [connection],
  );
  const [adding, setAdding] = useState(false);
  if (list.error) return <Banner tone="error">{describeError(list.error)}</Banner>;
  if (!list.data) return <Loading />;
  const servers = withLiveStatus(list.data.servers, live);
  // A host of an earlier release says nothing: it ran every team's stdio servers.
  const stdioAllowed = list.data.stdioAllowed !== false;
  const stdioReach = stdioReachOf(list.data);
  return (
    <section class="admin-panel card card-body" aria-label="MCP servers">
      <h2>MCP servers</h2>
      <p class="muted">
        Tools of the team’s own servers (an issue tracker, a wiki, a code host) for the agents you give them to. Every call asks a person first unless
        you let an agent run that tool without asking.
      </p>
      {servers.length === 0 ? <p class="empty">No MCP servers yet.</p> : null}
      <ul class="admin-list" aria-label="MCP servers">
        {servers.map((server) => (
          <ServerRow key={server.id} {...props} server={server} stdioReach={stdioReach} onChanged={list.reload} />
        ))}
      </ul>
      {adding ? (
        <ServerFields
          label="Add an MCP server"
          submitText="Add server"
          start={stdioAllowed ? NEW_SERVER : { ...NEW_SERVER, transport: 'http' }}
          stdioAllowed={stdioAllowed}
          stdioReach={stdioReach}
          onCancel={() => setAdding(false)}
          onSubmit={async (form) => {
            const outcome = addBody(form);
            if (outcome.kind === 'refused') return outcome.reason;
            if (outcome.kind === 'send') await connection.call('mcp-servers-v1/add', outcome.body);
            setAdding(false);
            list.reload();
            return null;
          }}
        />
      ) : (
        <div class="admin-inline">
          <button type="button" class="btn btn-primary btn-sm" onClick={() => setAdding(true)}>
            Add an MCP server
          </button>
        </div>
      )}
    </section>
  );
}

/** The add and edit form; `onSubmit` answers a reason the form cannot be sent, or null. */
/** What a stdio server sees and reaches on this host, for the form to say. A host of an
 * earlier release says nothing: it ran them as itself. */
function stdioReachOf(list: {
  stdioSandboxed?: boolean;
  stdioNetwork?: boolean;
  stdioNetworkKind?: 'none' | 'proxied' | 'host';
}): string {
  if (!list.stdioSandboxed) return 'The host runs it with only the environment below, in a folder of the team’s workspace.';
  const kind = list.stdioNetworkKind ?? (list.stdioNetwork === false ? 'none' : 'host');
  const reach = {
    none: 'nothing of the network',
    proxied: 'public addresses alone, through the host’s proxy (HTTP_PROXY and HTTPS_PROXY)',
    host: 'what the host reaches, services on the host’s own loopback included',
  }[kind];
  return `The host runs it in a sandbox, with only the environment below: the system’s programs and a folder of the team’s workspace (its home) are all it sees, and it reaches ${reach}.`;
}

function ServerFields(props: {
  label: string;
  submitText: string;
  start: McpServerForm;
  editing?: boolean;
  stdioAllowed?: boolean;
  stdioReach: string;
  onSubmit: (form: McpServerForm) => Promise<string | null>;
  onCancel: () => void;
}) {
  const { label, submitText, editing = false, stdioAllowed = true, stdioReach } = props;
  const [form, setForm] = useState<McpServerForm>(props.start);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (change: Partial<McpServerForm>) => setForm((old) => ({ ...old, ...change }));
  const kind = secretKind(form.transport);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const refused = await props.onSubmit(form);
      if (refused) setError(refused);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
    // The values written leave their inputs once sent, whatever the answer.
    setForm((old) => ({
      ...old,
      clientSecret: '',
      secrets: old.secrets.mode === 'replace' ? { mode: 'replace', rows: old.secrets.rows.map((r) => ({ ...r, value: '' })) } : old.secrets,
    }));
  };
  const setTransport = (transport: McpServerForm['transport']) => {
    if (transport === form.transport) return;
    // Another transport takes other secrets: they are written anew.
    set({ transport, secrets: { mode: 'replace', rows: [] } });
  };
  const rows = form.secrets.mode === 'replace' ? form.secrets.rows : [];
  const setRows = (next: SecretRow[]) => set({ secrets: { mode: 'replace', rows: next } });
  return (
    <form class="admin-form mcp-form" aria-label={label} onSubmit={(event) => void submit(event)}>
      {editing ? null : <h3>{label}</h3>}
      <label>
        Name
        <input type="text" aria-label="Name" value={form.name} maxLength={32} autoComplete="off" placeholder="tracker" onInput={(e) => set({ name: e.currentTarget.value })} required />
        <span class="admin-muted">Lower-case letters, digits and dashes; agents see its tools as mcp__{form.name.trim() || 'name'}__tool.</span>
      </label>
      <label>
        Transport
        <select aria-label="Transport" value={form.transport} onChange={(e) => setTransport(e.currentTarget.value as McpServerForm['transport'])}>
          <option value="stdio" disabled={!stdioAllowed && form.transport !== 'stdio'}>
            {stdioAllowed ? 'A command the host runs (stdio)' : 'A command the host runs (stdio): not allowed for this team on this host'}
          </option>
          <option value="http">An address (Streamable HTTP or SSE)</option>
        </select>
      </label>
      {form.transport === 'stdio' ? (
        <>
          <label>
            Command
            <input type="text" class="mono" value={form.command} autoComplete="off" placeholder="npx" onInput={(e) => set({ command: e.currentTarget.value })} required />
          </label>
          <label>
            Arguments
            <textarea class="mono" aria-label="Arguments" rows={3} value={form.args} placeholder={'-y\n@example/mcp-server'} onInput={(e) => set({ args: e.currentTarget.value })} />
            <span class="admin-muted">One a line. {stdioReach}</span>
          </label>
        </>
      ) : (
        <label>
          Address
          <input type="url" class="mono" aria-label="Address" value={form.url} autoComplete="off" placeholder="https://mcp.example.com/mcp" onInput={(e) => set({ url: e.currentTarget.value })} required />
          <span class="admin-muted">A server that speaks only the older HTTP+SSE transport is reached at its SSE address (often …/sse).</span>
        </label>
      )}
      {form.transport === 'http' ? (
        <fieldset class="mcp-client">
          <legend>OAuth client (optional)</legend>
          <p class="admin-muted">Only for a server whose sign-in service does not register apps itself: register Crewhost there with the redirect address http://127.0.0.1:33418/callback, then enter what it gave.</p>
          <label>
            Client ID
            <input type="text" class="mono" aria-label="Client ID" value={form.clientId} maxLength={255} autoComplete="off" onInput={(e) => set({ clientId: e.currentTarget.value })} />
          </label>
          <label>
            Client secret
            <input
              type="password"
              aria-label="Client secret"
              value={form.clientSecret}
              autoComplete="new-password"
              placeholder={form.clientSecretSet ? 'set (leave empty to keep)' : 'none'}
              onInput={(e) => set({ clientSecret: e.currentTarget.value })}
            />
          </label>
          {form.clientSecretSet ? (
            <div class="admin-inline">
              <span class="admin-muted" data-client-secret="set">
                Secret set
              </span>
              <button type="button" class="btn btn-ghost btn-sm" onClick={() => set({ clientSecretSet: false, clientSecret: '' })}>
                Remove the secret
              </button>
            </div>
          ) : null}
          <p class="admin-muted">The secret is sealed on the host and never shown again. Changing the client ends the server’s sign-in.</p>
        </fieldset>
      ) : null}
      <fieldset class="mcp-secrets">
        <legend>{kind.many}</legend>
        {form.secrets.mode === 'keep' ? (
          <>
            {form.secrets.names.length ? (
              <ul class="mcp-secret-names">
                {form.secrets.names.map((name) => (
                  <li key={name}>
                    <span class="mono">{name}</span> <span class="admin-muted">set</span>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="admin-muted">None.</p>
            )}
            <div class="admin-inline">
              <button type="button" class="btn btn-secondary btn-sm" onClick={() => set({ secrets: replaceSecrets(form.secrets.mode === 'keep' ? form.secrets.names : []) })}>
                {form.secrets.names.length ? 'Replace values' : `Add ${kind.one === 'header' ? 'headers' : 'variables'}`}
              </button>
              {form.secrets.names.length ? (
                <button type="button" class="btn btn-ghost btn-sm" onClick={() => setRows([])}>
                  Clear all
                </button>
              ) : null}
            </div>
          </>
        ) : (
          <>
            {editing ? <p class="admin-muted">These replace every saved value; a name left out is cleared.</p> : null}
            {rows.map((row, index) => (
              <div class="mcp-secret-row" key={index}>
                <input
                  type="text"
                  class="mono"
                  aria-label={`Name of ${kind.one} ${index + 1}`}
                  value={row.name}
                  autoComplete="off"
                  placeholder={form.transport === 'stdio' ? 'API_KEY' : 'Authorization'}
                  onInput={(e) => setRows(rows.map((r, i) => (i === index ? { ...r, name: e.currentTarget.value } : r)))}
                />
                <input
                  type="password"
                  aria-label={`Value of ${kind.one} ${index + 1}`}
                  value={row.value}
                  autoComplete="new-password"
                  onInput={(e) => setRows(rows.map((r, i) => (i === index ? { ...r, value: e.currentTarget.value } : r)))}
                />
                <button type="button" class="btn btn-ghost btn-sm" onClick={() => setRows(rows.filter((_r, i) => i !== index))}>
                  Remove
                </button>
              </div>
            ))}
            <div class="admin-inline">
              <button type="button" class="btn btn-secondary btn-sm" onClick={() => setRows([...rows, { name: '', value: '' }])}>
                {form.transport === 'stdio' ? 'Add a variable' : 'Add a header'}
              </button>
              {editing && props.start.secrets.mode === 'keep' && form.transport === props.start.transport ? (
                <button type="button" class="btn btn-ghost btn-sm" onClick={() => set({ secrets: props.start.secrets })}>
                  Keep the saved values
                </button>
              ) : null}
            </div>
            <p class="admin-muted">Values are sealed on the host and never shown again.</p>
          </>
        )}
      </fieldset>
      <label>
        Time limit of a call (seconds)
        <input type="number" aria-label="Time limit of a call (seconds)" min={1} max={3600} value={form.callTimeout} onInput={(e) => set({ callTimeout: e.currentTarget.value })} required />
      </label>
      {error ? <Banner tone="error">{error}</Banner> : null}
      <div class="admin-inline">
        <button type="submit" class="btn btn-primary btn-sm" disabled={busy}>
          {submitText}
        </button>
        <button type="button" class="btn btn-secondary btn-sm" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

type Tested = { tools: McpToolView[]; status: McpStatusView };

function ServerRow(props: { connection: HostConnection; server: McpServerView; agents: readonly McpAgent[]; signInServed: boolean; showTab: ShowTab; stdioReach: string; onChanged: () => void }) {
  const { connection, server, onChanged } = props;
  const [error, setError] = useState<unknown>(null);
  const [tested, setTested] = useState<Tested | null>(null);
  const [testing, setTesting] = useState(false);
  const [editing, setEditing] = useState(false);
  const [showAgents, setShowAgents] = useState(false);
  const mark = statusText(server.enabled, server.status);
  const names = secretNames(server);
  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      onChanged();
    } catch (failure) {
      setError(failure);
    }
  };
  const test = async () => {
    setError(null);
    setTesting(true);
    try {
      setTested(await connection.call('mcp-servers-v1/test', { id: server.id }));
    } catch (failure) {
      setError(failure);
    } finally {
      setTesting(false);
    }
  };
  const outcome = tested ? testOutcome(tested) : null;
  return (
    <li class="admin-row mcp-row" data-mcp-server={server.name}>
      <div class="admin-row-head">
        <strong>{server.name}</strong>
        <span class="badge">{server.transport === 'stdio' ? 'stdio' : 'HTTP'}</span>
        <span class={`badge mcp-mark mcp-mark-${mark.tone}`} data-status={mark.key} role="status">
          {mark.text}
        </span>
      </div>
      <p class="admin-muted mono mcp-reach">{server.transport === 'stdio' ? [server.command ?? '', ...server.args].join(' ') : server.url}</p>
      <p class="admin-muted">
        {names.length ? `${secretKind(server.transport).many}: ${names.map((n) => `${n} set`).join(', ')} · ` : ''}
        {server.oauthClientId ? `OAuth client ${server.oauthClientId}${server.oauthClientSecret === 'set' ? ' (secret set)' : ''} · ` : ''}
        Calls end after {server.callTimeout} s · {server.agents.length === 0 ? 'no agent has it' : `${server.agents.length} agent${server.agents.length === 1 ? '' : 's'}`}
      </p>
      {server.enabled ? <SignIn connection={connection} server={server} needed={server.status.status === 'signIn'} served={props.signInServed} showTab={props.showTab} /> : null}
      {outcome ? (
        <Banner tone={outcome.ok ? 'success' : 'error'}>
          <span data-test-outcome>{outcome.text}</span>
        </Banner>
      ) : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      {editing ? null : (
        <div class="admin-inline">
          <button type="button" class="btn btn-secondary btn-sm" disabled={testing} onClick={() => void test()}>
            {testing ? 'Testing…' : 'Test connection'}
          </button>
          <button type="button" class="btn btn-secondary btn-sm" aria-expanded={showAgents} onClick={() => setShowAgents(!showAgents)}>
            Agents
          </button>
          <button type="button" class="btn btn-secondary btn-sm" onClick={() => void run(() => connection.call('mcp-servers-v1/update', { id: server.id, enabled: !server.enabled }))}>
            {server.enabled ? 'Turn off' : 'Turn on'}
          </button>
          <button type="button" class="btn btn-secondary btn-sm" onClick={() => setEditing(true)}>
            Edit
          </button>
          <ConfirmButton
            label="Delete"
            question={`Delete the MCP server ${server.name}? Agents lose its tools.`}
            confirmLabel="Delete"
            tone="secondary"
            size="sm"
            onConfirm={() => run(() => connection.call('mcp-servers-v1/delete', { id: server.id }))}
          />
        </div>
      )}
      {editing ? (
        <ServerFields
          label={`Edit ${server.name}`}
          submitText="Save"
          editing
          start={startEdit(server)}
          stdioReach={props.stdioReach}
          onCancel={() => setEditing(false)}
          onSubmit={async (form) => {
            const change = updateBody(server, form);
            if (change.kind === 'refused') return change.reason;
            if (change.kind === 'send') await connection.call('mcp-servers-v1/update', change.body);
            setEditing(false);
            setTested(null);
            onChanged();
            return null;
          }}
        />
      ) : null}
      {tested ? <ToolList tools={tested.tools} problems={tested.status.problems} /> : server.status.problems.length ? <ToolList tools={null} problems={server.status.problems} /> : null}
      {showAgents ? <AgentSwitches connection={connection} server={server} agents={props.agents} tools={tested?.tools ?? null} testing={testing} onTest={() => void test()} onChanged={onChanged} /> : null}
    </li>
  );
}

function ToolList({ tools, problems }: { tools: readonly McpToolView[] | null; problems: readonly string[] }) {
  return (
    <div class="mcp-tools">
      {tools ? (
        <>
          <h4>Tools</h4>
          {tools.length === 0 ? <p class="admin-muted">The server offers no tool.</p> : null}
          <ul class="mcp-tool-list" aria-label="Tools">
            {tools.map((tool) => (
              <li key={tool.name} class="mcp-tool" data-tool={tool.name}>
                <div class="admin-row-head">
                  <span class="mono">{tool.name}</span>
                  {tool.hints.map((hint) => (
                    <span key={hint} class="chip mcp-hint" title="What the server says of this tool; every call asks first all the same.">
                      {hintText(hint)}
                    </span>
                  ))}
                </div>
                {tool.description ? <p class="admin-muted">{tool.description}</p> : null}
              </li>
            ))}
          </ul>
          {tools.some((t) => t.hints.length) ? <p class="admin-muted">Hints are what the server says of a tool: shown, never trusted; a call asks first all the same.</p> : null}
        </>
      ) : null}
      {problems.length ? (
        <>
          <h4>Not offered</h4>
          <ul class="mcp-problems" aria-label="Tools not offered">
            {problems.map((problem) => {
              const parts = problemParts(problem);
              return (
                <li key={problem} class="admin-muted">
                  {parts.tool ? <span class="mono">{parts.tool}</span> : null}
                  {parts.tool ? ': ' : ''}
                  {parts.reason}
                </li>
              );
            })}
          </ul>
        </>
      ) : null}
    </div>
  );
}

function AgentSwitches(props: { connection: HostConnection; server: McpServerView; agents: readonly McpAgent[]; tools: readonly McpToolView[] | null; testing: boolean; onTest: () => void; onChanged: () => void }) {
  const { connection, server, agents, tools } = props;
  const [error, setError] = useState<unknown>(null);
  const send = (body: ReturnType<typeof agentSwitch>) => {
    setError(null);
    connection.call('mcp-servers-v1/set_agent', body).then(props.onChanged, setError);
  };
  if (agents.length === 0) return <p class="empty">The team has no agents yet.</p>;
  return (
    <div class="mcp-agents" role="group" aria-label={`Agents of ${server.name}`}>
      <h4>Agents</h4>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <ul class="admin-list">
        {agents.map((agent) => {
          const access = agentAccess(server, agent.id);
          // Tools the agent runs without asking stay listed even before the tools load.
          const names = [...new Set([...(tools ?? []).map((t) => t.name), ...access.unaskedTools])].sort();
          return (
            <li key={agent.id} class="admin-row" data-agent={agent.name}>
              <label class="mcp-check">
                <input type="checkbox" checked={access.enabled} onChange={(e) => send(agentSwitch(server, agent.id, e.currentTarget.checked))} />
                {agent.name} has this server
              </label>
              {access.enabled ? (
                <fieldset class="mcp-unasked">
                  <legend>Runs without asking</legend>
                  {names.map((tool) => (
                    <label key={tool} class="mcp-check">
                      <input type="checkbox" aria-label={`${agent.name} runs ${tool} without asking`} checked={access.unaskedTools.includes(tool)} onChange={(e) => send(toolSwitch(server, agent.id, tool, e.currentTarget.checked))} />
                      <span class="mono">{tool}</span>
                    </label>
                  ))}
                  {tools ? null : (
                    <button type="button" class="btn btn-ghost btn-sm" disabled={props.testing} onClick={props.onTest}>
                      Load the tools
                    </button>
                  )}
                  {names.length === 0 && tools ? <p class="admin-muted">The server offers no tool.</p> : null}
                </fieldset>
              ) : null}
            </li>
          );
        })}
      </ul>
    </div>
  );
}

type SignInState = { phase: 'idle' } | { phase: 'starting' } | { phase: 'open'; signInId: string; tabId: string } | { phase: 'done' } | { phase: 'failed'; reason: string };

function SignIn(props: { connection: HostConnection; server: McpServerView; needed: boolean; served: boolean; showTab: ShowTab }) {
  const { connection, server } = props;
  const [state, setState] = useState<SignInState>({ phase: 'idle' });
  const [error, setError] = useState<unknown>(null);
  const underWay = state.phase === 'open' || state.phase === 'starting';
  useEffect(() => {
    if (!underWay) return undefined;
    return connection.onEvent((event) => {
      const end = signInEnd(event, server.id);
      if (end) setState(end.kind === 'signedIn' ? { phase: 'done' } : { phase: 'failed', reason: end.reason });
    });
  }, [connection, server.id, underWay]);
  if (state.phase === 'idle' && !error && !props.needed) return null;
  if (!props.served) return <p class="admin-muted">This server needs a sign-in, which this host cannot do yet.</p>;
  const start = async () => {
    setError(null);
    setState({ phase: 'starting' });
    try {
      const started = await startMcpSignIn(connection, { serverId: server.id });
      setState((old) => (old.phase === 'starting' ? { phase: 'open', ...started } : old));
    } catch (failure) {
      setError(failure);
      setState({ phase: 'idle' });
    }
  };
  const cancel = async (signInId: string) => {
    setState({ phase: 'idle' });
    try {
      await cancelMcpSignIn(connection, { signInId });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <div class="mcp-sign-in">
      {state.phase === 'done' ? <Banner tone="success">Signed in.</Banner> : null}
      {state.phase === 'failed' ? <Banner tone="error">The sign-in did not work: {state.reason}</Banner> : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      {state.phase === 'open' ? (
        <>
          <p class="admin-muted">The server’s sign-in page is open in a private tab: take control and sign in.</p>
          <div class="mcp-sign-in-view">{props.showTab(state.tabId, () => void cancel(state.signInId))}</div>
          <button type="button" class="btn btn-secondary btn-sm" onClick={() => void cancel(state.signInId)}>
            Cancel the sign-in
          </button>
        </>
      ) : state.phase === 'done' && !props.needed ? null : (
        <button type="button" class="btn btn-primary btn-sm" disabled={state.phase === 'starting'} onClick={() => void start()}>
          {state.phase === 'starting' ? 'Opening…' : state.phase === 'failed' ? 'Sign in again' : 'Sign in'}
        </button>
      )}
    </div>
  );
}
