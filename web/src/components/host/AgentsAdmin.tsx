/**
 * The team's agents for admins and owners: create, change instructions, provider and
 * model, the browser profile, whether each gated tool family asks first, which of the
 * team's other agents it may ask (`ask_agent`), its skills, duplicate and
 * delete (saying what deleting closes), and each agent's memories and routines. Members see the agents
 * read-only, with the reason, and the memories they may reach.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { agentTabCount, deletionSummary, type AgentDeletion } from '../../host/agent-deletion';
import { EVENT, type Role, type TabView } from '../../host/protocol';
import { familyText } from '../../host/tool-families';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { AgentMemories } from './AgentMemories';
import { AgentRoutines } from './AgentRoutines';
import { AgentSkills } from './AgentSkills';
import { AgentTemplateActions, AgentTemplateImport } from './AgentTemplates';
import type { AgentView } from './ChatPanel';
import { READ_ONLY_REASON } from './ProvidersAdmin';

type Permission = 'ask' | 'auto-approve';

export function AgentsAdmin(props: { connection: HostConnection; role: Role; agents: AgentView[]; toolFamilies: string[]; profilesServed: boolean; memoriesServed?: boolean; routinesServed?: boolean; skillsServed?: boolean; templatesServed?: boolean; accountId?: string | null; tabs: readonly TabView[] }) {
  const canManage = props.role !== 'member';
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const create = (event: Event) => {
    event.preventDefault();
    setError(null);
    props.connection.call('agents-v1/create', { name: name.trim() }).then(() => setName(''), setError);
  };
  return (
    <section class="admin-panel card card-body" aria-label="Agents">
      <h2>Agents</h2>
      {canManage ? null : <Banner tone="info">{READ_ONLY_REASON}</Banner>}
      {canManage ? (
        <form class="admin-create" onSubmit={create}>
          <label for="new-agent-name">New agent's name</label>
          <div class="admin-create-row">
            <input id="new-agent-name" type="text" placeholder="Shopper, Researcher…" value={name} onInput={(e) => setName(e.currentTarget.value)} />
            <button type="submit" class="btn btn-primary" disabled={!name.trim()}>
              Create agent
            </button>
          </div>
        </form>
      ) : null}
      {canManage && props.templatesServed ? <AgentTemplateImport connection={props.connection} /> : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <ul class="admin-list">
        {props.agents.map((agent) => (
          <AgentRow key={agent.id} {...props} agent={agent} canManage={canManage} />
        ))}
      </ul>
    </section>
  );
}

function AgentRow(props: { connection: HostConnection; agent: AgentView; agents: AgentView[]; toolFamilies: string[]; canManage: boolean; profilesServed: boolean; memoriesServed?: boolean; routinesServed?: boolean; skillsServed?: boolean; templatesServed?: boolean; accountId?: string | null; tabs: readonly TabView[] }) {
  const { connection, agent, canManage } = props;
  const [instructions, setInstructions] = useState(agent.instructions);
  const [provider, setProvider] = useState(agent.provider);
  const [model, setModel] = useState(agent.model ?? '');
  const [permissions, setPermissions] = useState<Record<string, Permission>>(agent.permissions as Record<string, Permission>);
  const [mayAsk, setMayAsk] = useState<string[]>(agent.mayAsk ?? []);
  const others = props.agents.filter((a) => a.id !== agent.id);
  // The host's count of what deleting takes, asked when Delete… is pressed.
  const [confirming, setConfirming] = useState<AgentDeletion | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const providers = useHostLoad(connection, 'providers-v1/list', {}, [EVENT.providersChanged]);
  // A provider is named as a person named it, never by its id.
  const providerName = (id: string) => providers.data?.providers.find((p) => p.id === id)?.name ?? id;
  const profiles = useHostLoad(canManage && props.profilesServed ? connection : null, 'browser-profiles-v1/list', {}, [EVENT.profilesChanged]);

  const chosen = providers.data?.providers.find((p) => p.id === provider) ?? null;
  const run = (call: Promise<unknown>, done?: () => void) => {
    setError(null);
    setSaved(false);
    call.then(() => {
      setSaved(true);
      done?.();
    }, setError);
  };
  const save = (event: Event) => {
    event.preventDefault();
    // Only agents the team still has: one deleted meanwhile is no longer offered.
    const asked = mayAsk.filter((id) => others.some((a) => a.id === id));
    run(connection.call('agents-v1/update', { id: agent.id, instructions, provider, model: model.trim() || null, permissions, mayAsk: asked }));
  };
  return (
    <li class="admin-row" data-agent={agent.id}>
      <details>
        <summary>
          <strong>{agent.name}</strong> <span class="admin-muted">{providerName(agent.provider)}{agent.model ? ` · ${agent.model}` : ''}</span>
        </summary>
        <form class="admin-form" onSubmit={save}>
          <label>
            Instructions
            <textarea rows={4} value={instructions} disabled={!canManage} onInput={(e) => setInstructions(e.currentTarget.value)} />
          </label>
          <label>
            Provider
            {canManage && providers.data ? (
              <select value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
                {providers.data.providers.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                    {p.usable ? '' : ' (not usable yet)'}
                  </option>
                ))}
              </select>
            ) : (
              <input type="text" value={providerName(provider)} disabled />
            )}
          </label>
          <label>
            Model{' '}
            <input
              value={model}
              list={`models-${agent.id}`}
              placeholder={chosen?.defaultModel ? `The provider's default (${chosen.defaultModel})` : "The provider's default"}
              disabled={!canManage}
              onInput={(e) => setModel(e.currentTarget.value)}
            />
            <datalist id={`models-${agent.id}`}>
              {(chosen?.models ?? []).map((m) => (
                <option key={m} value={m} />
              ))}
            </datalist>
          </label>
          <fieldset class="admin-permissions">
            <legend>Run without asking</legend>
            {props.toolFamilies.map((family) => (
              <label key={family}>
                <input
                  type="checkbox"
                  disabled={!canManage}
                  checked={permissions[family] === 'auto-approve'}
                  onChange={(e) => setPermissions((old) => ({ ...old, [family]: e.currentTarget.checked ? 'auto-approve' : 'ask' }))}
                />
                {familyText(family)}
              </label>
            ))}
          </fieldset>
          {others.length ? (
            <fieldset class="admin-permissions">
              <legend>May ask</legend>
              {others.map((other) => (
                <label key={other.id}>
                  <input
                    type="checkbox"
                    disabled={!canManage}
                    checked={mayAsk.includes(other.id)}
                    onChange={(e) => {
                      const on = e.currentTarget.checked;
                      setMayAsk((old) => (on ? [...old.filter((id) => id !== other.id), other.id] : old.filter((id) => id !== other.id)));
                    }}
                  />
                  {other.name}
                </label>
              ))}
            </fieldset>
          ) : null}
          {canManage ? (
            <div class="admin-inline">
              <button type="submit" class="btn btn-primary btn-sm">
                Save
              </button>
              <button type="button" class="btn btn-secondary btn-sm" onClick={() => run(connection.call('agents-v1/duplicate', { id: agent.id }))}>
                Duplicate
              </button>
              {confirming ? (
                <>
                  <span class="agent-deletion">{deletionSummary(agent.name, confirming, agentTabCount(props.tabs, agent.id))}</span>
                  <button type="button" class="btn btn-danger btn-sm" onClick={() => run(connection.call('agents-v1/delete', { id: agent.id }))}>
                    Delete for good
                  </button>
                  <button type="button" class="btn btn-ghost btn-sm" onClick={() => setConfirming(null)}>
                    Keep it
                  </button>
                </>
              ) : (
                <button
                  type="button"
                  class="btn btn-danger btn-sm"
                  onClick={() => {
                    setError(null);
                    setSaved(false);
                    connection.call('agents-v1/deletion', { id: agent.id }).then(setConfirming, setError);
                  }}
                >
                  Delete…
                </button>
              )}
            </div>
          ) : null}
        </form>
        {canManage && profiles.data ? (
          <label class="admin-field">
            Browser profile
            <select
              value={agent.ownBrowserSession ? 'agent' : (agent.browserProfileId ?? 'shared')}
              onChange={(e) => run(connection.call('browser-profiles-v1/assign', { agentId: agent.id, profile: e.currentTarget.value }))}
            >
              <option value="shared">Shared</option>
              <option value="agent">Only this agent</option>
              {profiles.data.profiles.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {canManage && props.templatesServed ? <AgentTemplateActions connection={connection} agentId={agent.id} /> : null}
        {saved ? <Banner tone="success">Saved.</Banner> : null}
        {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
        {props.skillsServed ? <AgentSkills connection={connection} agentId={agent.id} canManage={canManage} /> : null}
        {props.memoriesServed ? <AgentMemories connection={connection} agentId={agent.id} canDeleteAll={canManage} /> : null}
        {props.routinesServed ? <AgentRoutines connection={connection} agentId={agent.id} accountId={props.accountId ?? null} canManageAll={canManage} /> : null}
      </details>
    </li>
  );
}
