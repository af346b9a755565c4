/**
 * The question before an agent is deleted: what goes with it, counted by the host
 * (`agents-v1/deletion`: every member's chats, private ones too, and the turns under way)
 * and from the team's tab list (the agent's open tabs).
 */

import type { RouteResult } from './protocol';

export type AgentDeletion = RouteResult<'agents-v1/deletion'>;

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The open tabs the agent works in: these close when it is deleted. */
export function agentTabCount(tabs: readonly { ownerAgentId: string | null }[], agentId: string): number {
  return tabs.filter((tab) => tab.ownerAgentId === agentId).length;
}

/** The sentence the delete question shows, naming what closes and what goes. */
export function deletionSummary(name: string, deletion: AgentDeletion, openTabs: number): string {
  const parts = [
    openTabs ? `closes its ${count(openTabs, 'open tab', 'open tabs')}` : 'closes no open tab',
    deletion.threads
      ? `deletes ${count(deletion.threads, 'chat', 'chats')} with it${deletion.runningTurns ? ` (the agent is working in ${deletion.runningTurns} of them now)` : ''}`
      : 'deletes no chat',
  ];
  return `Deleting ${name} ${parts.join(' and ')}, and forgets its memories and workspace files. This cannot be undone.`;
}
