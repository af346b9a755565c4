/**
 * The team's browser profiles on this host. Owners and admins create, rename, recolour,
 * clear and delete them; members see the list only, and why. It follows `browser-profiles-changed`,
 * so a change made anywhere shows here without a reload.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { EVENT, type ProfileView } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { Field } from '../Field';
import { Loading } from '../Loading';
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

export function ProfilesPanel({ connection, canManage }: { connection: HostConnection; canManage: boolean }) {
  const profiles = useHostLoad(connection, 'browser-profiles-v1/list', {}, EVENTS);
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
            <ProfileRow key={profile.id} profile={profile} canManage={canManage} connection={connection} run={run} />
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
}) {
  const { profile, connection, run } = props;
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
          </div>
        )}
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
