/**
 * The team's tabs on this host that this member can see: each page's title with its
 * address below, its profile, owner and who is in control. A new tab opens in the profile the
 * member chooses: Shared, a named one (when the host serves profiles), or a private sign-in whose
 * storage lives in memory, goes with the tab, and which only this member sees.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { heldText, type MemberNames } from '../../host/control-requests';
import { EVENT, type TabView } from '../../host/protocol';
import { useTabIcon } from '../../host/tab-icons';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { Icon } from '../Icon';

/** A short readable form of a tab's address: host and path, no scheme. */
export function tabTitle(url: string): string {
  if (url === 'about:blank') return 'New tab';
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return url;
  }
}

/** What a tab's row leads with: the page's title, else its short address. */
export function tabHeading(tab: Pick<TabView, 'title' | 'url'>): string {
  return tab.title.trim() || tabTitle(tab.url);
}

/** The page's icon before its title; a neutral page glyph while it has none. */
function TabIcon({ connection, tab }: { connection: HostConnection; tab: TabView }) {
  const address = useTabIcon(connection, tab.id, tab.icon);
  return address ? (
    <img class="tab-row-icon" src={address} alt="" width={16} height={16} />
  ) : (
    <span class="tab-row-icon tab-row-icon-none" aria-hidden="true" />
  );
}

export function ProfileChip({ label, hue }: { label: string; hue: number | null }) {
  const style = hue === null ? undefined : { '--chip-hue': String(hue) };
  return (
    <span class={`chip${hue === null ? '' : ' chip-hued'}`} style={style}>
      {label}
    </span>
  );
}

const PROFILE_EVENTS = [EVENT.profilesChanged] as const;
const SHARED = '';
const PRIVATE = 'private-sign-in';

export function TabList(props: {
  connection: HostConnection;
  tabs: TabView[];
  error: unknown;
  selected: string | null;
  profilesServed: boolean;
  /** This member's account, and every member's name by account. */
  meId: string;
  names: MemberNames;
  /** Every agent's name by id (an agent this member cannot list reads as "An agent"). */
  agentNames: ReadonlyMap<string, string>;
  onSelect: (tabId: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const [profileId, setProfileId] = useState(SHARED);
  const profiles = useHostLoad(props.profilesServed ? props.connection : null, 'browser-profiles-v1/list', {}, PROFILE_EVENTS);
  const choices = profiles.data?.profiles ?? [];
  // A profile deleted meanwhile falls back to Shared.
  const chosen = profileId === PRIVATE || choices.some((profile) => profile.id === profileId) ? profileId : SHARED;
  const openTab = async () => {
    setBusy(true);
    setFailure(null);
    try {
      const tab = await props.connection.call('browser-control-v1/new_tab', {
        url: 'about:blank',
        profileId: chosen === SHARED || chosen === PRIVATE ? null : chosen,
        private: chosen === PRIVATE,
      });
      props.onSelect(tab.id);
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card tab-list" aria-label="Host tabs">
      <div class="tab-list-head">
        <h2>Tabs</h2>
        <form
          class="new-tab"
          onSubmit={(event) => {
            event.preventDefault();
            void openTab();
          }}
        >
          <select
            aria-label="Profile of the new tab"
            class="new-tab-profile"
            title={chosen === PRIVATE ? 'A private sign-in keeps nothing after the tab closes, and only you see it' : undefined}
            value={chosen}
            onChange={(event) => setProfileId((event.target as HTMLSelectElement).value)}
          >
            <option value={SHARED}>Shared</option>
            {choices.map((profile) => (
              <option key={profile.id} value={profile.id}>
                {profile.name}
              </option>
            ))}
            <option value={PRIVATE}>Private sign-in</option>
          </select>
          <button type="submit" class="btn btn-secondary btn-sm" disabled={busy}>
            <Icon name="plus" size={16} />
            New tab
          </button>
        </form>
      </div>
      {props.error || failure ? <Banner tone="error">{describeError(props.error ?? failure)}</Banner> : null}
      {props.tabs.length === 0 ? (
        <p class="empty">No tabs yet.</p>
      ) : (
        <ul class="rows" aria-label="Tabs">
          {props.tabs.map((tab) => {
            const held = heldText(tab, props.meId, props.names);
            return (
            <li key={tab.id}>
              <button
                type="button"
                class="tab-row"
                aria-current={tab.id === props.selected ? 'true' : undefined}
                onClick={() => props.onSelect(tab.id)}
              >
                <span class="tab-row-title" title={tab.title || tab.url}>
                  <TabIcon connection={props.connection} tab={tab} />
                  {tabHeading(tab)}
                </span>
                {tab.url !== 'about:blank' ? (
                  <span class="tab-row-address" title={tab.url}>
                    {tabTitle(tab.url)}
                  </span>
                ) : null}
                <span class="tab-row-meta">
                  <ProfileChip label={tab.partitionLabel} hue={tab.hue} />
                  <span class="tab-owner">{tab.ownerAgentId ? (props.agentNames.get(tab.ownerAgentId) ?? 'An agent') : 'Opened by a person'}</span>
                  {held ? <span class={`tag${tab.heldBy === props.meId ? ' tag-accent' : ''}`}>{held}</span> : null}
                </span>
                <span class="visually-hidden">{tab.url}</span>
              </button>
            </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
