/**
 * One host, live: the connection's state, chat with the team's agents and their requests,
 * the team's tabs on it, a live view to watch and steer one of them, the team's browser
 * profiles and proxies, and the agents, skills, providers, vault, web search, webhooks and workspaces. It
 * opens on Chat when the host offers chat. Parts the host does not serve (per
 * `capabilities`) are not shown.
 */

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { listHosts, listMembers } from '../api/endpoints';
import type { TeamView } from '../api/types';
import { Banner } from '../components/Banner';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { AgentsAdmin } from '../components/host/AgentsAdmin';
import { AttentionCards, useAttention, type AlwaysAllow } from '../components/host/AttentionCards';
import { ChatPanel, type ChatSelection } from '../components/host/ChatPanel';
import { LiveView } from '../components/host/LiveView';
import { McpServersAdmin } from '../components/host/McpServersAdmin';
import { NotificationBell } from '../components/host/NotificationBell';
import { NotificationSettings } from '../components/host/NotificationSettings';
import { ProvidersAdmin } from '../components/host/ProvidersAdmin';
import { ProxiesAdmin } from '../components/host/ProxiesAdmin';
import { VaultAdmin } from '../components/host/VaultAdmin';
import { TeamWebhooksAdmin } from '../components/host/TeamWebhooksAdmin';
import { WebSearchAdmin } from '../components/host/WebSearchAdmin';
import { WorkspacePanel } from '../components/host/WorkspacePanel';
import { SkillsAdmin } from '../components/host/SkillsAdmin';
import { ProfilesPanel } from '../components/host/ProfilesPanel';
import { TabList } from '../components/host/TabList';
import { UsagePanel, type UsageView } from '../components/host/UsagePanel';
import { TakeoverRequests, takeoverRequestFrom, type TakeoverRequest } from '../components/host/TakeoverRequests';
import { describeError } from '../error-messages';
import { ChatMemory } from '../host/chat-memory';
import type { HostConnection } from '../host/connection';
import { replaceHostKey } from '../host/known-hosts';
import { MCP_SIGN_IN_CAPABILITY } from '../host/mcp-sign-in';
import { CAPABILITY, EVENT, viewFeatures, type Capabilities, type Whoami } from '../host/protocol';
import { useHostLoad } from '../host/use-host-call';
import { useHostSession, type LiveStatus } from '../host/use-host-session';
import { navigate, routePath, type HostSection, type Route } from '../router';
import { useSession } from '../session-context';
import { useLoad } from '../use-load';

const STATUS_TEXT: Record<LiveStatus, string> = {
  otherTab: 'Waiting for the other tab',
  connecting: 'Connecting…',
  connected: 'Connected',
  reconnecting: 'Reconnecting…',
  revoked: 'Access ended',
  disconnected: 'Disconnected',
  keyChanged: 'Blocked: host key changed',
  failed: 'Could not connect',
};

export type Section = HostSection;

const SECTION_TEXT: Record<Section, string> = {
  chat: 'Chat',
  tabs: 'Tabs',
  profiles: 'Browser profiles',
  proxies: 'Proxies',
  agents: 'Agents',
  skills: 'Skills',
  providers: 'Providers',
  usage: 'Usage',
  vault: 'Vault',
  search: 'Web search',
  webhooks: 'Webhooks',
  mcp: 'MCP servers',
  workspace: 'Workspace',
  notifications: 'Notifications',
};

/** The sections a host's capabilities give, in order: Chat first, so the screen opens on it. */
export function hostSections(served: ReadonlySet<string>): Section[] {
  const sections: Section[] = [];
  const has = (capability: string) => served.has(capability);
  if (has(CAPABILITY.agents) && has(CAPABILITY.threads)) sections.push('chat');
  if (has(CAPABILITY.browserControl)) sections.push('tabs');
  if (has(CAPABILITY.browserProfiles)) sections.push('profiles');
  if (has(CAPABILITY.browserProxies) && has(CAPABILITY.browserProfiles)) sections.push('proxies');
  if (has(CAPABILITY.agents)) sections.push('agents');
  if (has(CAPABILITY.skills)) sections.push('skills');
  if (has(CAPABILITY.providers)) sections.push('providers');
  if (has(CAPABILITY.usage)) sections.push('usage');
  if (has(CAPABILITY.vault)) sections.push('vault');
  if (has(CAPABILITY.webSearch)) sections.push('search');
  if (has(CAPABILITY.teamWebhooks)) sections.push('webhooks');
  if (has(CAPABILITY.mcpServers) && has(CAPABILITY.agents)) sections.push('mcp');
  if (has(CAPABILITY.workspace) && has(CAPABILITY.agents)) sections.push('workspace');
  if (has(CAPABILITY.notifications)) sections.push('notifications');
  return sections;
}

/**
 * The address that brings the screen back as it is: its section and, in Chat, the open
 * agent and thread (their ids only). Chat with nothing open is the host's own address.
 */
export function hostAddress(teamId: string, hostId: string, section: Section, chat: ChatSelection): Route {
  if (section !== 'chat') return { name: 'host', teamId, hostId, section };
  if (!chat.agentId) return { name: 'host', teamId, hostId };
  return chat.threadId ? { name: 'host', teamId, hostId, section, agentId: chat.agentId, threadId: chat.threadId } : { name: 'host', teamId, hostId, section, agentId: chat.agentId };
}

/** Keep the address on `route`, in place (a choice on the screen adds no history entry). */
export function useAddress(route: Route): void {
  const path = routePath(route);
  useEffect(() => {
    if (path !== window.location.pathname + window.location.search) navigate(path, { replace: true });
  }, [path]);
}

export function HostScreen({ team, hostId, opening, openingChat }: { team: TeamView; hostId: string; opening?: Section; openingChat?: ChatSelection }) {
  const { me } = useSession();
  const hosts = useLoad(() => listHosts(team.id), [team.id]);
  const host = hosts.data?.hosts.find((h) => h.id === hostId) ?? null;
  const live = useHostSession(team.id, hostId, me.id);
  const connection = live.state.phase === 'connected' ? live.state.connection : null;
  const back = routePath({ name: 'team', teamId: team.id, section: 'hosts' });
  // What the member looks at outlives a connection: after a reconnect (a role change, a
  // network blip) the same tab stays open when the new connection still lists it. The
  // screen opens on Chat, or on the section (and chat) its address names; a host without it
  // opens on its first section instead. The address follows, so a reload comes back here.
  const [section, setSection] = useState<Section>(opening ?? 'chat');
  const [selected, setSelected] = useState<string | null>(null);
  // The chat's drafts, unsent messages and choice outlive a connection (in memory only).
  const [chatMemory] = useState(() => new ChatMemory());
  const [chat, setChat] = useState<ChatSelection>(() => openingChat ?? { agentId: null, threadId: null });
  useAddress(hostAddress(team.id, hostId, section, chat));

  if (hosts.data && !host) {
    return (
      <section class="card card-body">
        <Banner tone="error">This team has no such host.</Banner>
        <Link href={back}>Back to hosts</Link>
      </section>
    );
  }
  return (
    <div class="host-screen">
      <header class="host-header">
        <div class="host-title">
          <Link href={back} class="link-muted">
            Hosts
          </Link>
          <span aria-hidden="true">/</span>
          <h1>{host?.name ?? 'Host'}</h1>
        </div>
        <span class={`connection connection-${live.status}`} role="status" data-connection={live.status}>
          <span class="presence-dot" aria-hidden="true" />
          {STATUS_TEXT[live.status]}
        </span>
        {connection ? (
          <NotificationBell
            key={connection.serial}
            connection={connection}
            onOpenThread={(item) => {
              setSection('chat');
              setChat({ agentId: item.agentId, threadId: item.threadId });
            }}
          />
        ) : null}
      </header>
      <ConnectionNotice live={live} accountId={me.id} hostId={hostId} />
      {connection ? (
        <Connected
          key={connection.serial}
          connection={connection}
          teamId={team.id}
          meId={me.id}
          section={section}
          onSection={setSection}
          selected={selected}
          onSelect={setSelected}
          chatMemory={chatMemory}
          chat={chat}
          onChat={setChat}
        />
      ) : null}
    </div>
  );
}

function ConnectionNotice({ live, accountId, hostId }: { live: ReturnType<typeof useHostSession>; accountId: string; hostId: string }) {
  if (live.lock === 'busy' || live.lock === 'lost') {
    return (
      <section class="card card-body notice">
        <p>
          {live.lock === 'busy'
            ? 'Crewhost is open in another tab. This tab will connect when that one closes.'
            : 'This host was opened in another tab. This tab will connect again when that one closes.'}
        </p>
        <button type="button" class="btn btn-primary" onClick={live.takeOver}>
          Use it here
        </button>
      </section>
    );
  }
  const { phase, detail, keyChange } = live.state;
  if (phase === 'keyChanged' && keyChange) {
    return (
      <section class="card card-body notice">
        <Banner tone="error">{detail}</Banner>
        <button
          type="button"
          class="btn btn-danger"
          onClick={() => {
            replaceHostKey(accountId, hostId, keyChange.offered);
            live.reconnect();
          }}
        >
          I confirmed the new key: trust it
        </button>
      </section>
    );
  }
  if (phase === 'failed' || phase === 'revoked' || phase === 'disconnected') {
    return (
      <section class="card card-body notice">
        <Banner tone={phase === 'failed' ? 'error' : 'info'}>{detail}</Banner>
        <button type="button" class="btn btn-secondary" onClick={live.reconnect}>
          Reconnect
        </button>
      </section>
    );
  }
  if (phase !== 'connected') return <Loading />;
  return null;
}

function Connected(props: {
  connection: HostConnection;
  teamId: string;
  meId: string;
  section: Section;
  onSection: (section: Section) => void;
  selected: string | null;
  onSelect: (tabId: string | null) => void;
  chatMemory: ChatMemory;
  chat: ChatSelection;
  onChat: (selection: ChatSelection) => void;
}) {
  const { connection, teamId, meId, section, selected } = props;
  const setSection = props.onSection;
  const setSelected = props.onSelect;
  const [about, setAbout] = useState<{ capabilities: Capabilities; whoami: Whoami } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [requests, setRequests] = useState<TakeoverRequest[]>([]);
  // The tab whose takeover request this person opened: its view opens holding it.
  const [takingOver, setTakingOver] = useState<string | null>(null);
  // Usage opens on spending; a budget's refusal in the chat opens its Budgets.
  const [usageView, setUsageView] = useState<UsageView>('spending');
  // Who holds a tab is named as the hub names members; without the list, a stand-in says it.
  const members = useLoad(() => listMembers(teamId), [teamId]);
  const names = useMemo(() => new Map((members.data?.members ?? []).map((m) => [m.accountId, m.name] as const)), [members.data]);

  useEffect(() => {
    Promise.all([connection.call('capabilities', {}), connection.call('host-v1/whoami', {})]).then(
      ([capabilities, whoami]) => setAbout({ capabilities, whoami }),
      setError,
    );
  }, [connection]);

  useEffect(
    () =>
      connection.onEvent((event) => {
        const request = event.event === EVENT.takeoverRequested ? takeoverRequestFrom(event.data) : null;
        if (request) setRequests((old) => [...old.filter((r) => r.tabId !== request.tabId), request]);
      }),
    [connection],
  );
  const dismiss = (tabId: string) => setRequests((old) => old.filter((r) => r.tabId !== tabId));

  const served = new Set(about?.capabilities.capabilities ?? []);
  const tabs = useHostLoad(served.has(CAPABILITY.browserControl) ? connection : null, 'browser-control-v1/list_tabs', {}, [EVENT.tabsChanged]);
  const tabList = tabs.data?.tabs ?? [];
  const chatServed = served.has(CAPABILITY.agents) && served.has(CAPABILITY.threads);
  const agents = useHostLoad(served.has(CAPABILITY.agents) ? connection : null, 'agents-v1/list', {}, [EVENT.agentsChanged]);
  const agentList = agents.data?.agents ?? [];
  const agentNames = useMemo(() => new Map(agentList.map((a) => [a.id, a.name] as const)), [agentList]);
  const attention = useAttention(connection, served.has(CAPABILITY.attention));
  const familyOfTool = agents.data?.familyOfTool;
  // Only owners and admins change an agent's permissions, so only they get "always allow".
  const alwaysAllow = useMemo<AlwaysAllow | null>(
    () =>
      about && about.whoami.role !== 'member' && familyOfTool
        ? { familyOfTool, permissions: (agentId) => agentList.find((a) => a.id === agentId)?.permissions ?? null }
        : null,
    [about, familyOfTool, agentList],
  );

  // A member who joined since the list loaded is looked up once, when they hold or ask.
  const looked = useRef(new Set<string>());
  const lookUp = (accountId: unknown) => {
    if (typeof accountId !== 'string' || !members.data || names.has(accountId) || looked.current.has(accountId)) return;
    looked.current.add(accountId);
    void members.reload();
  };
  useEffect(() => tabList.forEach((tab) => lookUp(tab.heldBy)), [tabList, names]);
  useEffect(
    () => connection.onEvent((event) => event.event === EVENT.controlRequested && lookUp((event.data as { accountId?: unknown } | null)?.accountId)),
    [connection, names],
  );
  const current = tabList.find((tab) => tab.id === selected) ?? null;

  if (error) return <Banner tone="error">{describeError(error)}</Banner>;
  if (!about) return <Loading />;
  const sections = hostSections(served);
  const role = about.whoami.role;
  const watch = (tabId: string) => {
    setSection('tabs');
    setSelected(tabId);
  };
  const shown = sections.includes(section) ? section : sections[0];
  if (!shown) return <p class="empty">This host serves nothing this client can show.</p>;
  // Requests of the open chat show in it; the others show above every section.
  const elsewhere = attention.filter((r) => shown !== 'chat' || r.threadId !== props.chat.threadId);

  return (
    <>
      {sections.length > 1 ? <SectionTabs sections={sections} shown={shown} onSection={setSection} /> : null}
      <TakeoverRequests
        requests={requests}
        tabs={tabList}
        agentNames={agentNames}
        onOpen={(tabId) => {
          dismiss(tabId);
          setTakingOver(tabId);
          setSection('tabs');
          setSelected(tabId);
        }}
        onDismiss={dismiss}
      />
      <AttentionCards
        connection={connection}
        requests={elsewhere}
        agentNames={agentNames}
        alwaysAllow={alwaysAllow}
        manager={role !== 'member'}
        onOpenThread={
          chatServed
            ? (request) => {
                setSection('chat');
                props.onChat({ agentId: request.agentId, threadId: request.threadId });
              }
            : undefined
        }
      />
      {shown === 'chat' ? (
        <ChatPanel
          connection={connection}
          meId={meId}
          agents={agentList}
          agentsLoaded={agents.data !== null}
          agentsError={agents.error}
          memberNames={names}
          memory={props.chatMemory}
          selection={props.chat}
          onSelection={props.onChat}
          requests={attention}
          alwaysAllow={alwaysAllow}
          manager={role !== 'member'}
          onWatch={served.has(CAPABILITY.browserControl) ? watch : null}
          onProviders={sections.includes('providers') ? () => setSection('providers') : null}
          onBudgets={
            role !== 'member' && sections.includes('usage') && served.has(CAPABILITY.budgets)
              ? () => {
                  setUsageView('budgets');
                  setSection('usage');
                }
              : null
          }
        />
      ) : shown === 'agents' ? (
        <AgentsAdmin connection={connection} role={role} agents={agentList} toolFamilies={agents.data?.toolFamilies ?? []} profilesServed={served.has(CAPABILITY.browserProfiles)} memoriesServed={served.has(CAPABILITY.agentMemories)} routinesServed={served.has(CAPABILITY.routines)} skillsServed={served.has(CAPABILITY.skills)} templatesServed={served.has(CAPABILITY.agentTemplates)} accountId={about.whoami.accountId} tabs={tabList} />
      ) : shown === 'skills' ? (
        <SkillsAdmin connection={connection} role={role} agentNames={agentNames} />
      ) : shown === 'workspace' ? (
        <WorkspacePanel connection={connection} agents={agentList} />
      ) : shown === 'providers' ? (
        <ProvidersAdmin connection={connection} role={role} />
      ) : shown === 'usage' ? (
        <UsagePanel connection={connection} role={role} budgetsServed={served.has(CAPABILITY.budgets)} agents={agentList} members={names} view={usageView} onView={setUsageView} />
      ) : shown === 'vault' ? (
        <VaultAdmin connection={connection} role={role} />
      ) : shown === 'proxies' ? (
        <ProxiesAdmin connection={connection} role={role} tabs={tabList} />
      ) : shown === 'search' ? (
        <WebSearchAdmin connection={connection} role={role} />
      ) : shown === 'notifications' ? (
        <NotificationSettings connection={connection} role={role} mailServed={served.has(CAPABILITY.mailServer)} />
      ) : shown === 'webhooks' ? (
        <TeamWebhooksAdmin connection={connection} role={role} />
      ) : shown === 'mcp' ? (
        <McpServersAdmin
          connection={connection}
          role={role}
          agents={agentList}
          signInServed={served.has(MCP_SIGN_IN_CAPABILITY)}
          showTab={(tabId, onClose) => {
            const tab = tabList.find((t) => t.id === tabId);
            return tab ? (
              <LiveView key={tab.id} connection={connection} tab={tab} features={viewFeatures(served)} meId={meId} names={names} onBack={onClose} onOpened={() => undefined} />
            ) : (
              <p class="admin-muted">Opening the sign-in page…</p>
            );
          }}
        />
      ) : shown === 'tabs' ? (
        <div class={`tabs-layout${current ? ' has-selection' : ''}`}>
          <TabList
            connection={connection}
            tabs={tabList}
            error={tabs.error}
            selected={current?.id ?? null}
            profilesServed={served.has(CAPABILITY.browserProfiles)}
            meId={meId}
            names={names}
            agentNames={agentNames}
            onSelect={setSelected}
          />
          <div class="view-pane">
            {current ? (
              <LiveView
                key={current.id}
                connection={connection}
                tab={current}
                features={viewFeatures(served)}
                meId={meId}
                names={names}
                takeOnOpen={takingOver === current.id}
                teach={served.has(CAPABILITY.teach) && current.ownerAgentId ? { agentName: agentNames.get(current.ownerAgentId) ?? 'The agent', onReview: () => setSection('skills') } : null}
                onBack={() => setSelected(null)}
                onOpened={setSelected}
              />
            ) : (
              <div class="view-empty">
                <p>{tabList.length ? 'Choose a tab to watch it live.' : 'No tabs are open on this host.'}</p>
              </div>
            )}
          </div>
        </div>
      ) : (
        <ProfilesPanel connection={connection} canManage={role !== 'member'} proxiesServed={served.has(CAPABILITY.browserProxies)} tabs={tabList} />
      )}
    </>
  );
}

/**
 * The host's sections as tabs; on a phone they are one row that scrolls sideways, kept so
 * the chosen one is in the middle of the row (after a choice, and when the screen changes
 * size).
 */
function SectionTabs(props: { sections: Section[]; shown: Section; onSection: (section: Section) => void }) {
  const list = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const row = list.current;
    if (!row) return;
    const reveal = () => {
      const chosen = row.querySelector<HTMLElement>('[aria-selected="true"]');
      if (!chosen) return;
      // Centred, whatever was in sight before: the row looks the same however one got here.
      const outer = row.getBoundingClientRect();
      const inner = chosen.getBoundingClientRect();
      row.scrollLeft += inner.left + inner.width / 2 - (outer.left + outer.width / 2);
    };
    reveal();
    if (typeof ResizeObserver === 'undefined') return;
    const watch = new ResizeObserver(reveal);
    watch.observe(row);
    return () => watch.disconnect();
  }, [props.shown]);
  return (
    <div class="segmented" role="tablist" aria-label="Host sections" ref={list}>
      {props.sections.map((name) => (
        <button type="button" role="tab" key={name} aria-selected={props.shown === name} class="segment" onClick={() => props.onSection(name)}>
          {SECTION_TEXT[name]}
        </button>
      ))}
    </div>
  );
}
