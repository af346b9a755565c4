/**
 * What a fresh list of the account's teams means for the pages shown: a team gone from it
 * is one the account was removed from (said so on its pages), and a page the new role no
 * longer allows gives way to the team's members.
 */

import type { Role, TeamView } from './api/types';
import { canManage } from './roles';
import type { TeamSection } from './router';

export interface RemovedTeam {
  id: string;
  name: string;
}

/** The teams known to be removed, after `fresh` replaced `shown` (a team back again is dropped). */
export function removedTeams(shown: readonly TeamView[], fresh: readonly TeamView[], known: readonly RemovedTeam[]): RemovedTeam[] {
  const still = new Set(fresh.map((team) => team.id));
  const gone = shown.filter((team) => !still.has(team.id)).map(({ id, name }) => ({ id, name }));
  const kept = known.filter((team) => !still.has(team.id) && !gone.some((g) => g.id === team.id));
  return [...kept, ...gone];
}

/** The section to show for `role`: the same one while the role allows it, else the members. */
export function allowedSection(section: TeamSection, role: Role): TeamSection {
  return section === 'invitations' && !canManage(role) ? 'members' : section;
}
