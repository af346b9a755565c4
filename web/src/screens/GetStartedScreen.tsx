import type { ComponentChildren } from 'preact';
import { listHosts } from '../api/endpoints';
import type { HostView, TeamView } from '../api/types';
import { Banner } from '../components/Banner';
import { Icon, type IconName } from '../components/Icon';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { PageHeader } from '../components/PageHeader';
import { describeError } from '../error-messages';
import { routePath, type HostSection } from '../router';
import { canManage } from '../roles';
import { useLoad } from '../use-load';

/** The host a newcomer should open first: the built-in one, else any that is online. */
export function firstHost(hosts: readonly HostView[]): HostView | null {
  return hosts.find((h) => h.builtin) ?? hosts.find((h) => h.online) ?? hosts[0] ?? null;
}

function Step(props: { icon: IconName; title: string; state?: string; children: ComponentChildren }) {
  return (
    <li class="start-step">
      <span class="start-step-icon" aria-hidden="true">
        <Icon name={props.icon} size={20} />
      </span>
      <div class="start-step-body">
        <h2>
          {props.title}
          {props.state ? <span class="tag">{props.state}</span> : null}
        </h2>
        {props.children}
      </div>
    </li>
  );
}

/** The team's hosts, and the one a newcomer should open first. */
function useFirstHost(team: TeamView) {
  const hosts = useLoad(() => listHosts(team.id), [team.id]);
  return { hosts, host: hosts.data ? firstHost(hosts.data.hosts) : null };
}

type Hosts = ReturnType<typeof useFirstHost>;

function OpenHostStep({ team, found }: { team: TeamView; found: Hosts }) {
  const { hosts, host } = found;
  const hostsHref = routePath({ name: 'team', teamId: team.id, section: 'hosts' });
  return (
    <Step icon="hosts" title="Open a tab on a host">
      <p class="muted">
        A host is a machine with a real browser. Connect to it, open a tab, and watch or steer it live; agents work in the same
        tabs.
      </p>
      {hosts.error ? (
        <Banner tone="error">{describeError(hosts.error)}</Banner>
      ) : !hosts.data ? (
        <Loading />
      ) : host ? (
        <div class="start-actions">
          <Link class="btn btn-primary" href={routePath({ name: 'host', teamId: team.id, hostId: host.id })}>
            Connect to {host.builtin ? 'the built-in host' : host.name}
          </Link>
          <Link href={hostsHref}>All hosts</Link>
        </div>
      ) : (
        <p>
          {team.name} has no host yet. <Link href={hostsHref}>Add one on the Hosts page</Link>.
        </p>
      )}
    </Step>
  );
}

/** A link to one section of the first host's screen, once there is a host. */
function HostSectionLink({ team, found, section, children }: { team: TeamView; found: Hosts; section: HostSection; children: ComponentChildren }) {
  if (!found.host) return null;
  return (
    <div class="start-actions">
      <Link class="btn btn-secondary" href={routePath({ name: 'host', teamId: team.id, hostId: found.host.id, section })}>
        {children}
      </Link>
    </div>
  );
}

/** Where a person lands after signing up or joining a team: the first things worth doing. */
export function GetStartedScreen({ team }: { team: TeamView }) {
  const manage = canManage(team.role);
  const found = useFirstHost(team);
  return (
    <>
      <PageHeader title="Get started" subtitle={`A few first steps in ${team.name}.`} />
      <ol class="start-steps">
        <OpenHostStep team={team} found={found} />
        {manage ? (
          <Step icon="invite" title="Invite people">
            <p class="muted">Make an invitation link and send it to the people you work with. You choose the role it gives.</p>
            <div class="start-actions">
              <Link class="btn btn-secondary" href={routePath({ name: 'team', teamId: team.id, section: 'invitations' })}>
                Invite people
              </Link>
            </div>
          </Step>
        ) : null}
        <Step icon="account" title="Add a provider key">
          <p class="muted">
            Agents need a model provider's API key. {manage ? 'Set it' : 'An owner or admin sets it'} on the host's Providers tab; the
            key is kept on the host and never shown again.
          </p>
          <HostSectionLink team={team} found={found} section="providers">
            {manage ? 'Add a provider key' : 'See the providers'}
          </HostSectionLink>
        </Step>
        <Step icon="plus" title="Add an agent">
          <p class="muted">
            An agent is a named helper with instructions and a provider. {manage ? 'Create one on the host\'s Agents tab' : 'An owner or admin creates one'}, then
            talk to it in Chat.
          </p>
          <HostSectionLink team={team} found={found} section={manage ? 'agents' : 'chat'}>
            {manage ? 'Add an agent' : 'Chat with an agent'}
          </HostSectionLink>
        </Step>
      </ol>
    </>
  );
}
