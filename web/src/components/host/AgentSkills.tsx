/**
 * One agent's skills: a switch per saved skill of the team (`skills-v1/enable`). The agent's
 * instructions list the name and description of each skill that is on (`skills-v1/agent_skills`);
 * drafts are left out until a person saves them. Members see the switches without changing them.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { EVENT } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';

const SKILL_EVENTS = [EVENT.skillsChanged];

export function AgentSkills(props: { connection: HostConnection; agentId: string; canManage: boolean }) {
  const { connection, agentId, canManage } = props;
  const team = useHostLoad(connection, 'skills-v1/list', {}, SKILL_EVENTS);
  const enabled = useHostLoad(connection, 'skills-v1/agent_skills', { agentId }, SKILL_EVENTS);
  const [error, setError] = useState<unknown>(null);
  const saved = (team.data?.skills ?? []).filter((s) => s.state !== 'draft').sort((a, b) => a.name.localeCompare(b.name));
  const on = new Set((enabled.data?.skills ?? []).map((s) => s.name));
  const turn = (name: string, value: boolean) => {
    setError(null);
    connection.call('skills-v1/enable', { name, agentId, enabled: value }).then(enabled.reload, setError);
  };
  const failed = team.error ?? enabled.error;
  return (
    <fieldset class="admin-permissions agent-skills" aria-label="Skills">
      <legend>Skills</legend>
      {failed ? <Banner tone="error">{describeError(failed)}</Banner> : null}
      {team.data && !saved.length ? <p class="admin-muted">The team has no saved skills yet. Add them in Skills.</p> : null}
      {enabled.data
        ? saved.map((skill) => (
            <label key={skill.name} title={skill.description}>
              <input type="checkbox" role="switch" disabled={!canManage} checked={on.has(skill.name)} onChange={(e) => turn(skill.name, e.currentTarget.checked)} />
              {skill.name}
            </label>
          ))
        : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
    </fieldset>
  );
}
