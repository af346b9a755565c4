import type { ComponentChildren } from 'preact';
import { listHosts } from '../api/endpoints';
import type { HostView, TeamView } from '../api/types';
import { Banner } from '../components/Banner';
import { Icon, type IconName } from '../components/Icon';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { PageHeader } from '../components/PageHeader';
import { describeError } from '../error-messages';
import { routePath } from '../router';
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

function OpenHostStep({ team }: { team: TeamView }) {
  const hosts = useLoad(() => listHosts(team.id), [team.id]);
  const host = hosts.data ? firstHost(hosts.data.hosts) : null;
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

/** Where a person lands after signing up or joining a team: the first things worth doing. */
export function GetStartedScreen({ team }: { team: TeamView }) {
  const manage = canManage(team.role);
  const origin = typeof window === 'undefined' ? 'https://your-hub' : window.location.origin;
  return (
    <>
      <PageHeader title="Get started" subtitle={`A few first steps in ${team.name}.`} />
      <ol class="start-steps">
        <OpenHostStep team={team} />
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
        <Step icon="account" title="Add a provider key" state="Coming to the web client">
          <p class="muted">
            Agents need a model provider's API key. {manage ? 'For now, set it' : 'An owner or admin sets it'} from a terminal
            with the peer command: sign in once, then give the key when it asks (it is not shown as you type).
          </p>
          {manage ? (
            <pre class="start-command">
              <code>
                crewhost-peer login --hub {origin} --email you@example.com{'\n'}crewhost-peer providers set anthropic
              </code>
            </pre>
          ) : null}
        </Step>
        <Step icon="plus" title="Add an agent" state="Coming to the web client">
          <p class="muted">
            An agent is a named helper with instructions and a provider. {manage ? 'For now, create one' : 'An owner or admin creates one'}{' '}
            with the peer command, then talk to it.
          </p>
          <pre class="start-command">
            <code>
              {manage
                ? `crewhost-peer call agents-v1/create '{"name": "Researcher"}'\ncrewhost-peer chat Researcher "What is on example.com?"`
                : 'crewhost-peer agents\ncrewhost-peer chat AGENT "What is on example.com?"'}
            </code>
          </pre>
        </Step>
      </ol>
    </>
  );
}
