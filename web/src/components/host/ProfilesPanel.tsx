/**
 * The team's browser profiles on this host. Owners and admins create, rename, recolour,
 * clear and delete them and, on a host with `browser-proxies-v1`, choose each one's proxy
 * (asking first when that closes open tabs); members see the list only (with each
 * profile's proxy), and why. It follows `browser-profiles-changed`, so a change made
 * anywhere shows here without a reload.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { EVENT, type ProfileView, type TabView } from '../../host/protocol';
import { closeTabsQuestion, tabsOfProfiles } from '../../host/proxy-form';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { Field } from '../Field';
import { Loading } from '../Loading';
import { PROXY_EVENTS, Question } from './ProxiesAdmin';
import { ProfileChip } from './TabList';

/** The hues a profile may take (the host's palette of agent avatar colours), with names. */
export const PROFILE_HUES = [4, 28, 48, 96, 148, 176, 204, 232, 268, 320] as const;
const HUE_NAMES: Record<(typeof PROFILE_HUES)[number], string> = {
  4: 'Red',
  28: 'Orange',
  48: 'Amber',
  96: 'Lime',
  148: 'Green',
  176: 'Teal',
  204: 'Sky',
  232: 'Blue',
  268: 'Violet',
  320: 'Pink',
};

const EVENTS = [EVENT.profilesChanged] as const;

/** What a profile's proxy menu offers: each proxy by name (null: Automatic), and which one it uses. */
export interface ProxyChoices {
  proxies: Array<{ id: string; name: string }>;
  /** The proxy's name each profile uses, by profile id (what a member may see). */
  used: Map<string, { id: string | null; name: string }>;
}

function useProxyChoices(connection: HostConnection, served: boolean, canManage: boolean): ProxyChoices | null {
  const listed = useHostLoad(served && canManage ? connection : null, 'browser-proxies-v1/list', {}, PROXY_EVENTS);
  const named = useHostLoad(served && !canManage ? connection : null, 'browser-proxies-v1/profile_proxies', {}, PROXY_EVENTS);
  if (listed.data) {
    const used = new Map(listed.data.proxies.flatMap((proxy) => proxy.profiles.map((profile) => [profile, { id: proxy.id, name: proxy.name }] as const)));
    return { proxies: listed.data.proxies.map(({ id, name }) => ({ id, name })), used };
  }
  if (named.data) return { proxies: [], used: new Map(named.data.profiles.map((p) => [p.profileId, { id: null, name: p.proxyName }] as const)) };
  return null;
}

export function ProfilesPanel({
  connection,
  canManage,
  proxiesServed = false,
  tabs = [],
}: {
  connection: HostConnection;
  canManage: boolean;
  proxiesServed?: boolean;
  tabs?: readonly TabView[];
}) {
  const profiles = useHostLoad(connection, 'browser-profiles-v1/list', {}, EVENTS);
  const proxies = useProxyChoices(connection, proxiesServed, canManage);
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async (action: () => Promise<unknown>) => {
    setFailure(null);
    try {
      await action();
      profiles.reload();
    } catch (error) {
      setFailure(describeError(error));
    }
  };
  const create = async (event: Event) => {
    event.preventDefault();
    setNameError(undefined);
    setBusy(true);
    try {
      await connection.call('browser-profiles-v1/create', { name });
      setName('');
      profiles.reload();
    } catch (error) {
      setNameError(describeError(error));
    } finally {
      setBusy(false);
    }
  };

  const list = profiles.data?.profiles ?? [];
  return (
    <section class="card" aria-label="Browser profiles">
      <div class="card-body profiles-intro">
        <h2>Browser profiles</h2>
        <p class="muted">
          Each profile keeps its own cookies and sign-ins. Agents assigned to a profile open their tabs in it; the others share the team's
          profile.
        </p>
        {canManage ? (
          <form class="inline-form" onSubmit={(event) => void create(event)}>
            <Field id="profile-name" label="Profile name" value={name} onValue={setName} error={nameError} maxLength={60} autoComplete="off" />
            <button type="submit" class="btn btn-primary" disabled={busy || !name.trim()}>
              Create profile
            </button>
          </form>
        ) : (
          <p class="profiles-readonly">Only owners and admins change profiles.</p>
        )}
        {failure ? <Banner tone="error">{failure}</Banner> : null}
        {profiles.error ? <Banner tone="error">{describeError(profiles.error)}</Banner> : null}
      </div>
      {!profiles.data && !profiles.error ? (
        <Loading />
      ) : list.length === 0 ? (
        <p class="empty">No browser profiles yet.</p>
      ) : (
        <ul class="rows" aria-label="Profiles">
          {list.map((profile) => (
            <ProfileRow key={profile.id} profile={profile} canManage={canManage} connection={connection} run={run} proxies={proxies} tabs={tabs} />
          ))}
        </ul>
      )}
    </section>
  );
}

function ProfileRow(props: {
  profile: ProfileView;
  canManage: boolean;
  connection: HostConnection;
  run: (action: () => Promise<unknown>) => Promise<void>;
  proxies: ProxyChoices | null;
  tabs: readonly TabView[];
}) {
  const { profile, connection, run, proxies } = props;
  const using = proxies?.used.get(profile.id) ?? null;
  // A proxy change closes the profile's tabs: with tabs open, it asks first.
  const [proxyQuestion, setProxyQuestion] = useState<{ question: string; proxyId: string | null } | null>(null);
  const assign = (proxyId: string | null) => run(() => connection.call('browser-proxies-v1/assign', { profile: profile.id, proxyId }));
  const chooseProxy = (proxyId: string | null) => {
    const question = closeTabsQuestion(tabsOfProfiles(props.tabs, [profile.name]));
    if (question) setProxyQuestion({ question, proxyId });
    else void assign(proxyId);
  };
  const [editing, setEditing] = useState(false);
  // While a clear or delete asks, its question takes the row's actions' place.
  const [asking, setAsking] = useState(false);
  const [name, setName] = useState(profile.name);
  return (
    <li class={`row profile-row${asking ? ' is-confirming' : ''}`}>
      <div class="row-main">
        {editing ? (
          <form
            class="inline-form"
            onSubmit={(event) => {
              event.preventDefault();
              void run(() => connection.call('browser-profiles-v1/update', { id: profile.id, name })).then(() => setEditing(false));
            }}
          >
            <Field id={`rename-${profile.id}`} label="New name" value={name} onValue={setName} maxLength={60} autoFocus />
            <button type="submit" class="btn btn-primary btn-sm">
              Save
            </button>
            <button type="button" class="btn btn-ghost btn-sm" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </form>
        ) : (
          <div class="row-title">
            <ProfileChip label={profile.name} hue={profile.hue} />
            {proxies && !props.canManage ? <span class="row-sub">Proxy: {using?.name ?? 'Automatic'}</span> : null}
          </div>
        )}
        {proxyQuestion ? (
          <Question
            question={proxyQuestion.question}
            confirmLabel="Close tabs and change"
            onConfirm={() => {
              setProxyQuestion(null);
              void assign(proxyQuestion.proxyId);
            }}
            onCancel={() => setProxyQuestion(null)}
          />
        ) : null}
      </div>
      {props.canManage && !editing ? (
        <div class="row-side profile-actions">
          <label class="visually-hidden" for={`hue-${profile.id}`}>
            Colour of {profile.name}
          </label>
          <select
            id={`hue-${profile.id}`}
            class="hue-select"
            value={String(profile.hue)}
            style={{ '--chip-hue': String(profile.hue) }}
            onChange={(event) =>
              void run(() => connection.call('browser-profiles-v1/update', { id: profile.id, hue: Number((event.target as HTMLSelectElement).value) }))
            }
          >
            {PROFILE_HUES.map((hue) => (
              <option key={hue} value={String(hue)}>
                {HUE_NAMES[hue]}
              </option>
            ))}
          </select>
          {proxies ? (
            <>
              <label class="visually-hidden" for={`proxy-${profile.id}`}>
                Proxy of {profile.name}
              </label>
              <select
                id={`proxy-${profile.id}`}
                class="proxy-select"
                value={using?.id ?? ''}
                onChange={(event) => {
                  const value = (event.target as HTMLSelectElement).value;
                  // The select shows the saved choice until the change is made.
                  (event.target as HTMLSelectElement).value = using?.id ?? '';
                  chooseProxy(value || null);
                }}
              >
                <option value="">Automatic</option>
                {proxies.proxies.map((proxy) => (
                  <option key={proxy.id} value={proxy.id}>
                    {proxy.name}
                  </option>
                ))}
              </select>
            </>
          ) : null}
          <button
            type="button"
            class="btn btn-secondary btn-sm"
            onClick={() => {
              setName(profile.name);
              setEditing(true);
            }}
          >
            Rename
          </button>
          <ConfirmButton
            label="Clear data"
            question="Close its tabs and erase its cookies and storage?"
            confirmLabel="Clear"
            tone="secondary"
            size="sm"
            onAskingChange={setAsking}
            onConfirm={() => run(() => connection.call('browser-profiles-v1/clear', { id: profile.id }))}
          />
          <ConfirmButton
            label="Delete"
            question="Delete this profile? Its agents move to the shared profile."
            confirmLabel="Delete"
            size="sm"
            onAskingChange={setAsking}
            onConfirm={() => run(() => connection.call('browser-profiles-v1/delete', { id: profile.id }))}
          />
        </div>
      ) : null}
    </li>
  );
}
