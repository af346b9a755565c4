/**
 * Agents asking for a person: an agent's `request_takeover` reaches every connected member
 * as `browser-takeover-requested`; each request shows until someone opens the tab or
 * dismisses it.
 */

import type { EventData, TabView } from '../../host/protocol';
import { Icon } from '../Icon';
import { tabTitle } from './TabList';

export type TakeoverRequest = Pick<EventData<'browser-takeover-requested'>, 'tabId' | 'agentId' | 'reason'>;

/** The request in an event's data, or null when the data is not one. */
export function takeoverRequestFrom(data: unknown): TakeoverRequest | null {
  if (typeof data !== 'object' || data === null) return null;
  const record = data as Record<string, unknown>;
  if (typeof record.tabId !== 'string') return null;
  return {
    tabId: record.tabId,
    agentId: typeof record.agentId === 'string' ? record.agentId : null,
    reason: typeof record.reason === 'string' ? record.reason : '',
  };
}

export function TakeoverRequests(props: {
  requests: TakeoverRequest[];
  tabs: TabView[];
  agentNames: ReadonlyMap<string, string>;
  onOpen: (tabId: string) => void;
  onDismiss: (tabId: string) => void;
}) {
  // A request for a tab that has closed since is no longer anyone's to answer.
  const open = props.requests.filter((request) => props.tabs.some((tab) => tab.id === request.tabId));
  if (open.length === 0) return null;
  return (
    <ul class="takeover-requests" aria-label="Requests from agents">
      {open.map((request) => {
        const tab = props.tabs.find((t) => t.id === request.tabId)!;
        const who = (request.agentId && props.agentNames.get(request.agentId)) || 'An agent';
        return (
          <li key={request.tabId} class="banner banner-info takeover-request" role="status">
            <Icon name="hand" />
            <span class="takeover-text">
              <strong>{who} asks a person to take over {tabTitle(tab.url)}.</strong>
              {request.reason ? <span> {request.reason}</span> : null}
            </span>
            <button type="button" class="btn btn-primary btn-sm" onClick={() => props.onOpen(request.tabId)}>
              Open tab
            </button>
            <button type="button" class="btn btn-ghost btn-sm" onClick={() => props.onDismiss(request.tabId)}>
              Dismiss
            </button>
          </li>
        );
      })}
    </ul>
  );
}
