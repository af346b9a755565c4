import type { TeamView } from '../api/types';
import { navigate } from '../router';
import { ROLE_LABELS } from '../roles';

/** Choose the team the pages show; "Create team…" is the last choice. */
export function TeamSwitcher({ teams, current }: { teams: TeamView[]; current: TeamView | null }) {
  const NEW = '__new__';
  function change(value: string) {
    if (value === NEW) navigate({ name: 'createTeam' });
    else navigate({ name: 'team', teamId: value, section: 'members' });
  }
  return (
    <div class="team-switcher">
      <label for="team-switcher" class="team-switcher-label">
        Team
      </label>
      <select id="team-switcher" value={current?.id ?? ''} onChange={(event) => change(event.currentTarget.value)}>
        {current === null ? (
          <option value="" disabled>
            {teams.length ? 'Choose a team' : 'No team yet'}
          </option>
        ) : null}
        {teams.map((team) => (
          <option key={team.id} value={team.id}>
            {team.name}
          </option>
        ))}
        <option value={NEW}>+ Create team…</option>
      </select>
      {current ? (
        <p class="team-switcher-role">
          Your role: <strong>{ROLE_LABELS[current.role]}</strong>
        </p>
      ) : null}
    </div>
  );
}
