/** Where a memory came from, as the Memories section says it. */
import { describe, expect, it } from 'vitest';
import { provenance } from '../src/components/host/AgentMemories';

const base = {
  id: 'm1',
  agentId: 'a1',
  text: 'The team books trains',
  site: null,
  scope: 'team' as const,
  memberId: null,
  pinned: false,
  uses: 3,
  createdAt: 1,
  updatedAt: null,
  updatedBy: null,
  lastActiveAt: 1,
};

describe('where a memory came from', () => {
  const titles = new Map([['t1', 'Trip plans']]);

  it('names the thread of a remember, or says the viewer cannot open it', () => {
    const kept = { ...base, source: { kind: 'remember', threadIds: ['t1'], turnId: 'u1' } };
    expect(provenance(kept, titles)).toBe("The team's · kept by the agent with remember in “Trip plans”");
    const hidden = { ...kept, source: { ...kept.source, threadIds: ['t2'] } };
    expect(provenance(hidden, titles)).toContain('a thread you cannot open');
  });

  it('says a review of browsing steps, and whose a private memory is', () => {
    const reviewed = { ...base, scope: 'member' as const, memberId: 'acct', source: { kind: 'review', threadIds: [], turnId: null } };
    expect(provenance(reviewed, titles)).toBe('Private to one member · from the memory review of browsing steps');
  });
});
