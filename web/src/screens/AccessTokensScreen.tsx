/**
 * A member's personal access tokens for the hub's MCP endpoint: make one (a name, a host,
 * a scope, an expiry), see its secret once with the configuration for Claude Code, Cursor
 * and VS Code, list and revoke; and the audit list of their use. Owners and admins see
 * every member's tokens and uses, with the member's name, and may revoke any.
 */

import { useState } from 'preact/hooks';
import { createAccessToken, listAccessTokenUses, listAccessTokens, listHosts, listMembers, revokeAccessToken } from '../api/endpoints';
import type { AccessTokenCreated, AccessTokenView, TeamView } from '../api/types';
import {
  EXPIRIES,
  SCOPES,
  createBody,
  endpointUrl,
  outcomeText,
  scopeName,
  snippets,
  tokenState,
  type Scope,
  type Snippet,
  type TokenForm,
} from '../access-tokens';
import { Banner } from '../components/Banner';
import { ConfirmButton } from '../components/ConfirmButton';
import { CopyField } from '../components/CopyField';
import { Icon } from '../components/Icon';
import { Loading } from '../components/Loading';
import { PageHeader } from '../components/PageHeader';
import { TimeText } from '../components/TimeText';
import { describeError } from '../error-messages';
import { canManage } from '../roles';
import { formatDateTime } from '../time-format';
import { useLoad } from '../use-load';

export function AccessTokensScreen({ team }: { team: TeamView }) {
  const all = canManage(team.role);
  const tokens = useLoad(() => listAccessTokens(team.id, all), [team.id, all]);
  const uses = useLoad(() => listAccessTokenUses(team.id, all), [team.id, all]);
  const hosts = useLoad(() => listHosts(team.id), [team.id]);
  const members = useLoad(() => listMembers(team.id), [team.id]);
  const [created, setCreated] = useState<AccessTokenCreated | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const names = new Map((members.data?.members ?? []).map((m) => [m.accountId, m.name] as const));
  const hostNames = new Map((hosts.data?.hosts ?? []).map((h) => [h.id, h.name] as const));
  const tokenNames = new Map((tokens.data?.tokens ?? []).map((t) => [t.id, t.name] as const));

  const revoke = async (token: AccessTokenView) => {
    setNotice(null);
    try {
      await revokeAccessToken(team.id, token.id);
      if (created?.token.id === token.id) setCreated(null);
      await tokens.reload();
    } catch (error) {
      setNotice(describeError(error));
    }
  };

  return (
    <>
      <PageHeader title="Access tokens" subtitle={`Let an agent on your computer (Claude Code, Cursor, VS Code) use ${team.name}’s browsers through this hub.`} />
      <section class="card" aria-labelledby="new-token-title">
        <div class="card-body">
          <h2 id="new-token-title">Create a token</h2>
          <p class="muted">
            A token acts as you on one host: every action that asks first waits for you here and in your notifications. Revoke it any time; its sessions end
            at once.
          </p>
          {hosts.error ? <Banner tone="error">{describeError(hosts.error)}</Banner> : null}
          {hosts.data ? (
            hosts.data.hosts.length ? (
              <CreateToken
                teamId={team.id}
                hosts={hosts.data.hosts}
                onCreated={(value) => {
                  setCreated(value);
                  void tokens.reload();
                }}
              />
            ) : (
              <p class="empty">The team has no host yet.</p>
            )
          ) : (
            <Loading />
          )}
        </div>
        {created ? <Created created={created} onDone={() => setCreated(null)} /> : null}
      </section>

      <section class="card" aria-labelledby="tokens-title">
        <div class="card-head">
          <h2 id="tokens-title">{all ? 'Every member’s tokens' : 'Your tokens'}</h2>
        </div>
        {notice ? (
          <div class="card-body card-body-tight">
            <Banner tone="error">{notice}</Banner>
          </div>
        ) : null}
        {tokens.error ? (
          <div class="card-body">
            <Banner tone="error">{describeError(tokens.error)}</Banner>
          </div>
        ) : !tokens.data ? (
          <Loading />
        ) : tokens.data.tokens.length === 0 ? (
          <p class="empty">No tokens yet.</p>
        ) : (
          <ul class="rows" aria-label="Access tokens">
            {tokens.data.tokens.map((token) => {
              const state = tokenState(token);
              return (
                <li class="row token-row" key={token.id} data-token={token.name} data-state={state.key}>
                  <div class="row-main">
                    <div class="row-title">
                      {token.name}
                      <span class={`status status-${state.key === 'live' ? 'active' : 'revoked'}`}>{state.text}</span>
                    </div>
                    <div class="row-sub">
                      {all ? `${names.get(token.accountId) ?? 'A former member'} · ` : ''}
                      {scopeName(token.scope)} · {hostNames.get(token.hostId) ?? 'a removed host'}
                    </div>
                    <div class="row-sub">
                      Created <TimeText at={token.createdAt} text={formatDateTime(token.createdAt)} /> · last used{' '}
                      {token.lastUsedAt === null ? 'never' : <TimeText at={token.lastUsedAt} text={formatDateTime(token.lastUsedAt)} />} ·{' '}
                      {state.key === 'expired' ? 'expired' : 'expires'} <TimeText at={token.expiresAt} text={formatDateTime(token.expiresAt)} />
                    </div>
                  </div>
                  <div class="row-side">
                    {state.key === 'live' ? (
                      <ConfirmButton label="Revoke" question={`Revoke ${token.name}? What uses it stops at once.`} confirmLabel="Revoke" size="sm" onConfirm={() => revoke(token)} />
                    ) : null}
                  </div>
                </li>
              );
            })}
          </ul>
        )}
      </section>

      <section class="card" aria-labelledby="uses-title">
        <div class="card-head">
          <h2 id="uses-title">Audit list</h2>
          <p class="muted">{all ? 'Every tool call made with the team’s tokens' : 'Every tool call made with your tokens'}, newest first (the last 200).</p>
          <button type="button" class="btn btn-ghost btn-sm" onClick={() => void uses.reload()}>
            <Icon name="reload" size={16} />
            Reload
          </button>
        </div>
        {uses.error ? (
          <div class="card-body">
            <Banner tone="error">{describeError(uses.error)}</Banner>
          </div>
        ) : !uses.data ? (
          <Loading />
        ) : uses.data.uses.length === 0 ? (
          <p class="empty">No tool calls yet.</p>
        ) : (
          <ul class="rows" aria-label="Audit list">
            {uses.data.uses.map((use) => (
              <li class="row use-row" key={use.id} data-outcome={use.outcome}>
                <div class="row-main">
                  <div class="row-title">
                    <span class="mono">{use.tool}</span>
                    <span class={`status status-${use.outcome === 'ok' ? 'active' : 'revoked'}`}>{outcomeText(use)}</span>
                  </div>
                  <div class="row-sub">
                    <TimeText at={use.at} text={formatDateTime(use.at)} /> · {tokenNames.get(use.tokenId) ?? 'a token'}
                    {all ? ` · ${names.get(use.accountId) ?? 'a former member'}` : ''}
                  </div>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

function CreateToken(props: { teamId: string; hosts: readonly { id: string; name: string }[]; onCreated: (created: AccessTokenCreated) => void }) {
  const [form, setForm] = useState<TokenForm>({ name: '', hostId: props.hosts[0]?.id ?? '', scope: 'browser', expiresInDays: 30 });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (change: Partial<TokenForm>) => setForm((old) => ({ ...old, ...change }));
  const submit = async (event: Event) => {
    event.preventDefault();
    const outcome = createBody(form);
    if (outcome.kind === 'refused') {
      setError(outcome.reason);
      return;
    }
    setError(null);
    setBusy(true);
    try {
      props.onCreated(await createAccessToken(props.teamId, outcome.body));
      set({ name: '' });
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="token-form" aria-label="Create a token" onSubmit={(event) => void submit(event)} noValidate>
      {error ? <Banner tone="error">{error}</Banner> : null}
      <div class="form-grid">
        <div class="field">
          <label for="token-name">Name</label>
          <input id="token-name" type="text" maxLength={100} placeholder="Laptop Claude Code" value={form.name} onInput={(e) => set({ name: e.currentTarget.value })} />
        </div>
        <div class="field">
          <label for="token-host">Host</label>
          <select id="token-host" value={form.hostId} onChange={(e) => set({ hostId: e.currentTarget.value })}>
            {props.hosts.map((host) => (
              <option key={host.id} value={host.id}>
                {host.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="token-scope">Scope</label>
          <select id="token-scope" value={form.scope} onChange={(e) => set({ scope: e.currentTarget.value as Scope })}>
            {SCOPES.map((scope) => (
              <option key={scope.id} value={scope.id}>
                {scope.name}
              </option>
            ))}
          </select>
          <p class="field-hint">{SCOPES.find((s) => s.id === form.scope)?.detail}</p>
        </div>
        <div class="field">
          <label for="token-expiry">Expires after</label>
          <select id="token-expiry" value={String(form.expiresInDays)} onChange={(e) => set({ expiresInDays: Number(e.currentTarget.value) })}>
            {EXPIRIES.map((days) => (
              <option key={days} value={String(days)}>
                {days} days
              </option>
            ))}
          </select>
        </div>
        <div class="form-grid-action">
          <button type="submit" class="btn btn-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create token'}
          </button>
        </div>
      </div>
    </form>
  );
}

function Created({ created, onDone }: { created: AccessTokenCreated; onDone: () => void }) {
  const [client, setClient] = useState<Snippet['client']>('claude');
  const all = snippets(endpointUrl(window.location.origin), created.secret);
  const shown = all.find((s) => s.client === client) ?? all[0];
  return (
    <div class="card-body created-token" data-secret-shown="true">
      <Banner tone="info">
        “{created.token.name}” is ready. Copy its secret now: it is not shown again. Anyone who has it acts as you on the team’s browsers, so keep it out of
        shared files.
      </Banner>
      <CopyField id="token-secret" label="Secret" value={created.secret} />
      <h3>Connect a client</h3>
      <div class="segmented" role="tablist" aria-label="Client">
        {all.map((snippet) => (
          <button type="button" role="tab" key={snippet.client} class="segment" aria-selected={snippet.client === client} onClick={() => setClient(snippet.client)}>
            {snippet.title}
          </button>
        ))}
      </div>
      {shown ? <SnippetBlock snippet={shown} /> : null}
      <button type="button" class="btn btn-secondary btn-sm" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

function SnippetBlock({ snippet }: { snippet: Snippet }) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error('no clipboard');
      await navigator.clipboard.writeText(snippet.text);
      setCopied('copied');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <div class="snippet" data-client={snippet.client}>
      <div class="snippet-head">
        <span class="muted">{snippet.where}</span>
        <button type="button" class="btn btn-secondary btn-sm" onClick={() => void copy()}>
          <Icon name={copied === 'copied' ? 'check' : 'copy'} size={16} />
          {copied === 'copied' ? 'Copied' : 'Copy'}
        </button>
      </div>
      <pre class="snippet-text mono" aria-label={`${snippet.title} configuration`}>
        {snippet.text}
      </pre>
      {copied === 'failed' ? <p class="field-hint">Copying is not allowed here: select the text and press Ctrl+C.</p> : null}
    </div>
  );
}
