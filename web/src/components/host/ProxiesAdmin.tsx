/**
 * The team's browser proxies. Owners and admins see each proxy with its status mark
 * (not answering, sign-in refused; a member's computer online or offline), the profiles
 * that use it and whether a password is saved (never the password); they add, edit (the
 * password as a mask, kept unless changed) and delete after a question that names the
 * profiles moving to Automatic. A change that closes open tabs asks first. A save or a
 * delete refused because someone else changed the proxy says so and shows it anew.
 * Members see which proxy each profile uses, with the reason. The list follows
 * `browser-profiles-changed`, which the host sends for every proxy change and mark.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import { HostCallError, type HostConnection } from '../../host/connection';
import { EVENT, type ProfileView, type Role, type TabView } from '../../host/protocol';
import {
  closeTabsQuestion,
  deleteProxyQuestion,
  saveEdit,
  startEdit,
  statusText,
  tabsOfProfiles,
  withPassword,
  type ProxyEdit,
  type ProxyView,
} from '../../host/proxy-form';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { Loading } from '../Loading';

export const PROXY_EVENTS = [EVENT.profilesChanged] as const;

export const PROXY_MEMBER_REASON = 'Only admins and owners see and change proxies. You see which proxy each browser profile uses.';

/** A question asked in place before a change runs, with its answers. */
export function Question(props: { question: string; confirmLabel: string; onConfirm: () => void; onCancel: () => void }) {
  return (
    <span class="confirm" role="group" aria-label={props.question}>
      <span class="confirm-question">{props.question}</span>
      <button type="button" class="btn btn-danger-solid btn-sm" onClick={props.onConfirm}>
        {props.confirmLabel}
      </button>
      <button type="button" class="btn btn-ghost btn-sm" onClick={props.onCancel}>
        Cancel
      </button>
    </span>
  );
}

/** True for the host's refusal of a change to a proxy that someone else changed meanwhile. */
export function changedMeanwhile(error: unknown): boolean {
  return error instanceof HostCallError && error.code === 'browserProxyChanged';
}

function profileNames(ids: readonly string[], profiles: readonly ProfileView[]): string[] {
  return ids.map((id) => profiles.find((p) => p.id === id)?.name ?? 'a profile');
}

export function ProxiesAdmin({ connection, role, tabs }: { connection: HostConnection; role: Role; tabs: readonly TabView[] }) {
  return role === 'member' ? <MemberProxies connection={connection} /> : <ManagedProxies connection={connection} tabs={tabs} />;
}

function MemberProxies({ connection }: { connection: HostConnection }) {
  const uses = useHostLoad(connection, 'browser-proxies-v1/profile_proxies', {}, PROXY_EVENTS);
  const profiles = useHostLoad(connection, 'browser-profiles-v1/list', {}, PROXY_EVENTS);
  const failure = uses.error ?? profiles.error;
  if (failure) return <Banner tone="error">{describeError(failure)}</Banner>;
  if (!uses.data || !profiles.data) return <Loading />;
  const byProfile = new Map(uses.data.profiles.map((p) => [p.profileId, p.proxyName] as const));
  return (
    <section class="admin-panel card card-body" aria-label="Proxies">
      <h2>Proxies</h2>
      <Banner tone="info">{PROXY_MEMBER_REASON}</Banner>
      {profiles.data.profiles.length === 0 ? <p class="empty">No browser profiles yet; every tab uses the host’s own network.</p> : null}
      <ul class="admin-list" aria-label="Profiles and their proxies">
        {profiles.data.profiles.map((profile) => (
          <li key={profile.id} class="admin-row">
            <div class="admin-row-head">
              <strong>{profile.name}</strong>
              <span class="admin-muted">{byProfile.get(profile.id) ?? 'Automatic'}</span>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

function ManagedProxies({ connection, tabs }: { connection: HostConnection; tabs: readonly TabView[] }) {
  const proxies = useHostLoad(connection, 'browser-proxies-v1/list', {}, PROXY_EVENTS);
  const profiles = useHostLoad(connection, 'browser-profiles-v1/list', {}, PROXY_EVENTS);
  const [notice, setNotice] = useState<string | null>(null);
  const failure = proxies.error ?? profiles.error;
  if (failure) return <Banner tone="error">{describeError(failure)}</Banner>;
  if (!proxies.data || !profiles.data) return <Loading />;
  const profileList = profiles.data.profiles;
  // Someone else's change: say so, and show the proxies as they are now.
  const refused = (error: unknown) => {
    setNotice(describeError(error));
    proxies.reload();
  };
  return (
    <section class="admin-panel card card-body" aria-label="Proxies">
      <h2>Proxies</h2>
      <p class="muted">
        A named browser profile can reach the web through one of these; choose it in the profile’s menu under Browser profiles. Without one a profile is
        Automatic, the host’s own network. There is never a direct fallback.
      </p>
      <AddProxy connection={connection} onAdded={proxies.reload} />
      {notice ? <Banner tone="info">{notice}</Banner> : null}
      {proxies.data.proxies.length === 0 ? <p class="empty">No proxies yet.</p> : null}
      <ul class="admin-list" aria-label="Proxies">
        {proxies.data.proxies.map((proxy) => (
          <ProxyRow
            key={proxy.id}
            connection={connection}
            proxy={proxy}
            profileNames={profileNames(proxy.profiles, profileList)}
            tabs={tabs}
            onChanged={() => {
              setNotice(null);
              proxies.reload();
            }}
            onRefused={refused}
          />
        ))}
      </ul>
    </section>
  );
}

function AddProxy({ connection, onAdded }: { connection: HostConnection; onAdded: () => void }) {
  const [address, setAddress] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const signed = password ? withPassword(address, password) : address.trim();
    // The password leaves its input as it is sent.
    setPassword('');
    if (signed === null) {
      setError('A password needs a user name: write the address like http://user@host:port.');
      return;
    }
    setError(null);
    try {
      await connection.call('browser-proxies-v1/create', { address: signed });
      setAddress('');
      onAdded();
    } catch (failure) {
      setError(describeError(failure));
    }
  };
  return (
    <form class="admin-form proxy-form" aria-label="Add a proxy" onSubmit={(event) => void submit(event)}>
      <h3>Add a proxy</h3>
      <label>
        Address
        <input type="text" value={address} placeholder="socks5://user@proxy.example:1080 or host:port" autoComplete="off" onInput={(e) => setAddress(e.currentTarget.value)} required />
      </label>
      <label>
        Password
        <input type="password" value={password} autoComplete="new-password" onInput={(e) => setPassword(e.currentTarget.value)} />
      </label>
      {error ? <Banner tone="error">{error}</Banner> : null}
      <div class="admin-inline">
        <button type="submit" class="btn btn-primary btn-sm" disabled={!address.trim()}>
          Add proxy
        </button>
      </div>
    </form>
  );
}

interface Pending {
  question: string;
  confirmLabel: string;
  run: () => Promise<unknown>;
}

function ProxyRow(props: {
  connection: HostConnection;
  proxy: ProxyView;
  profileNames: string[];
  tabs: readonly TabView[];
  onChanged: () => void;
  onRefused: (error: unknown) => void;
}) {
  const { connection, proxy } = props;
  // The proxy as the edit form opened: its address is what the save says it saw.
  const [opened, setOpened] = useState<ProxyView | null>(null);
  const [edit, setEdit] = useState<ProxyEdit>({ address: '', password: '' });
  const [pending, setPending] = useState<Pending | null>(null);
  const [error, setError] = useState<string | null>(null);
  const mark = statusText(proxy);
  const openTabs = tabsOfProfiles(props.tabs, props.profileNames);

  const perform = async (run: () => Promise<unknown>) => {
    setPending(null);
    setError(null);
    try {
      await run();
      setOpened(null);
      props.onChanged();
    } catch (failure) {
      if (changedMeanwhile(failure)) {
        setOpened(null);
        props.onRefused(failure);
      } else setError(describeError(failure));
    }
  };
  const save = (event: Event) => {
    event.preventDefault();
    if (!opened) return;
    const outcome = saveEdit(opened, edit);
    // A typed password leaves its input as the save starts; the mask comes back if one is saved.
    setEdit((old) => ({ ...old, password: opened.password ? startEdit(opened).password : '' }));
    if (outcome.kind === 'nothing') {
      setOpened(null);
      return;
    }
    if (outcome.kind === 'refused') {
      setError(outcome.reason);
      return;
    }
    const run = () => connection.call('browser-proxies-v1/update', outcome.body);
    const question = closeTabsQuestion(openTabs);
    if (question) setPending({ question, confirmLabel: 'Close tabs and save', run });
    else void perform(run);
  };
  const askDelete = () => {
    // The delete sends the profiles this question names, so the host can refuse a stale one.
    const seen = [...proxy.profiles];
    setPending({
      question: deleteProxyQuestion(proxy.name, props.profileNames, openTabs),
      confirmLabel: 'Delete',
      run: () => connection.call('browser-proxies-v1/delete', { id: proxy.id, profiles: seen }),
    });
  };

  return (
    <li class="admin-row proxy-row" data-proxy={proxy.id}>
      <div class="admin-row-head">
        <strong>{proxy.name}</strong>
        {proxy.kind === 'computer' ? <span class="badge">Member’s computer</span> : null}
        {mark ? (
          <span class={`badge proxy-mark proxy-mark-${mark.tone}`} data-status={proxy.status ?? 'online'}>
            {mark.text}
          </span>
        ) : null}
        {proxy.password ? <span class="admin-muted">Password saved</span> : null}
      </div>
      {proxy.address ? <p class="admin-muted proxy-address">{proxy.address}</p> : null}
      <p class="admin-muted">{props.profileNames.length ? `Used by ${props.profileNames.join(', ')}` : 'No profile uses it.'}</p>
      {opened ? (
        <form class="admin-form proxy-form" aria-label={`Edit ${proxy.name}`} onSubmit={save}>
          <label>
            Address
            <input type="text" value={edit.address} autoComplete="off" onInput={(e) => setEdit((old) => ({ ...old, address: e.currentTarget.value }))} required />
          </label>
          <label>
            Password
            <input
              type="password"
              value={edit.password}
              autoComplete="new-password"
              onFocus={(e) => e.currentTarget.select()}
              onInput={(e) => setEdit((old) => ({ ...old, password: e.currentTarget.value }))}
            />
            {opened.password ? <span class="admin-muted">Saved. Leave it to keep it, empty it to remove it.</span> : null}
          </label>
          {pending ? null : (
            <div class="admin-inline">
              <button type="submit" class="btn btn-primary btn-sm">
                Save
              </button>
              <button type="button" class="btn btn-ghost btn-sm" onClick={() => setOpened(null)}>
                Cancel
              </button>
            </div>
          )}
        </form>
      ) : null}
      {pending ? (
        <Question question={pending.question} confirmLabel={pending.confirmLabel} onConfirm={() => void perform(pending.run)} onCancel={() => setPending(null)} />
      ) : opened ? null : (
        <div class="admin-inline">
          {proxy.kind === 'address' ? (
            <button
              type="button"
              class="btn btn-secondary btn-sm"
              onClick={() => {
                setError(null);
                setOpened(proxy);
                setEdit(startEdit(proxy));
              }}
            >
              Edit
            </button>
          ) : null}
          <button type="button" class="btn btn-danger btn-sm" onClick={askDelete}>
            Delete
          </button>
        </div>
      )}
      {error ? <Banner tone="error">{error}</Banner> : null}
    </li>
  );
}
