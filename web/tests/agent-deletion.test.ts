/** The question before deleting an agent names what closes and what goes. */
import { describe, expect, it } from 'vitest';
import { agentTabCount, deletionSummary } from '../src/host/agent-deletion';

describe('agent deletion question', () => {
  it('counts only the tabs the agent works in', () => {
    const tabs = [{ ownerAgentId: 'a' }, { ownerAgentId: 'b' }, { ownerAgentId: null }, { ownerAgentId: 'a' }];
    expect(agentTabCount(tabs, 'a')).toBe(2);
    expect(agentTabCount(tabs, 'c')).toBe(0);
  });

  it('names open tabs, chats and the turns under way', () => {
    expect(deletionSummary('Scout', { threads: 3, runningTurns: 1 }, 2)).toBe(
      'Deleting Scout closes its 2 open tabs and deletes 3 chats with it (the agent is working in 1 of them now), and forgets its memories and workspace files. This cannot be undone.',
    );
    expect(deletionSummary('Scout', { threads: 1, runningTurns: 0 }, 1)).toBe(
      'Deleting Scout closes its 1 open tab and deletes 1 chat with it, and forgets its memories and workspace files. This cannot be undone.',
    );
    expect(deletionSummary('Scout', { threads: 0, runningTurns: 0 }, 0)).toBe(
      'Deleting Scout closes no open tab and deletes no chat, and forgets its memories and workspace files. This cannot be undone.',
    );
  });
});
