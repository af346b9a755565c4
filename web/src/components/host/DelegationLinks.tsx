/**
 * The links between chats that agents started for each other (`ask_agent`): a chat another
 * agent asked says "asked by <agent>" with a link back, and a chat whose agent asked others
 * says "asked <agent>" with a link to each chat it started.
 */

import { EVENT, type EventData, type TeamApiEvent } from '../../host/protocol';

export interface ChatLink {
  threadId: string;
  agentId: string;
}

/** The chats a thread's agent asked, with the one a `delegation-started` event names. */
export function linksAfterEvent(links: ChatLink[], event: TeamApiEvent, threadId: string): ChatLink[] {
  if (event.event !== EVENT.delegationStarted) return links;
  const data = event.data as EventData<typeof EVENT.delegationStarted>;
  if (data.threadId !== threadId || links.some((l) => l.threadId === data.childThreadId)) return links;
  return [...links, { threadId: data.childThreadId, agentId: data.agentId }];
}

export function DelegationLinks(props: {
  askedBy: ChatLink | null;
  asked: ChatLink[];
  agentNames: ReadonlyMap<string, string>;
  onOpen: (link: ChatLink) => void;
}) {
  if (!props.askedBy && props.asked.length === 0) return null;
  const name = (agentId: string) => props.agentNames.get(agentId) ?? 'an agent no longer here';
  const link = (target: ChatLink) => (
    <button type="button" class="btn btn-link btn-sm" onClick={() => props.onOpen(target)}>
      {name(target.agentId)}
    </button>
  );
  return (
    <nav class="conversation-links" aria-label="Chats between agents">
      {props.askedBy ? <p>Asked by {link(props.askedBy)}</p> : null}
      {props.asked.length ? (
        <ul>
          {props.asked.map((target) => (
            <li key={target.threadId}>Asked {link(target)}</li>
          ))}
        </ul>
      ) : null}
    </nav>
  );
}
