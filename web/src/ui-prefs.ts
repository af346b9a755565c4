/**
 * UI preferences kept in localStorage. Only preferences live here (never tokens, never
 * account data): today just the team the user last looked at.
 */

export const LAST_TEAM_KEY = 'crewhost.ui.team';

export function readLastTeam(): string | null {
  try {
    return window.localStorage.getItem(LAST_TEAM_KEY);
  } catch {
    return null;
  }
}

export function rememberLastTeam(teamId: string): void {
  try {
    window.localStorage.setItem(LAST_TEAM_KEY, teamId);
  } catch {
    // Storage may be off (private mode, policy); the preference is only a convenience.
  }
}
