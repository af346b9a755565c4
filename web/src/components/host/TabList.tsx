/** The team's tabs on this host that this member can see, with owner and profile. */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import type { TabView } from '../../host/protocol';
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

export function ProfileChip({ label, hue }: { label: string; hue: number | null }) {
  const style = hue === null ? undefined : { '--chip-hue': String(hue) };
  return (
    <span class={`chip${hue === null ? '' : ' chip-hued'}`} style={style}>
      {label}
    </span>
  );
}

export function TabList(props: {
  connection: HostConnection;
  tabs: TabView[];
  error: unknown;
  selected: string | null;
  onSelect: (tabId: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const openTab = async () => {
    setBusy(true);
    setFailure(null);
    try {
      const tab = await props.connection.call('browser-control-v1/new_tab', { url: 'about:blank' });
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
        <button type="button" class="btn btn-secondary btn-sm" disabled={busy} onClick={() => void openTab()}>
          <Icon name="plus" size={16} />
          New tab
        </button>
      </div>
      {props.error || failure ? <Banner tone="error">{describeError(props.error ?? failure)}</Banner> : null}
      {props.tabs.length === 0 ? (
        <p class="empty">No tabs yet.</p>
      ) : (
        <ul class="rows" aria-label="Tabs">
          {props.tabs.map((tab) => (
            <li key={tab.id}>
              <button
                type="button"
                class="tab-row"
                aria-current={tab.id === props.selected ? 'true' : undefined}
                onClick={() => props.onSelect(tab.id)}
              >
                <span class="tab-row-title" title={tab.url}>
                  {tabTitle(tab.url)}
                </span>
                <span class="tab-row-meta">
                  <ProfileChip label={tab.partitionLabel} hue={tab.hue} />
                  <span class="tab-owner">{tab.ownerAgentId ? `Agent ${tab.ownerAgentId.slice(0, 6)}` : 'Opened by a person'}</span>
                  {tab.heldByPerson ? <span class="tag">In control</span> : null}
                </span>
                <span class="visually-hidden">{tab.url}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
