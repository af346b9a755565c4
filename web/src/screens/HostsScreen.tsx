import { listHosts } from '../api/endpoints';
import type { TeamView } from '../api/types';
import { Banner } from '../components/Banner';
import { Icon } from '../components/Icon';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { PageHeader } from '../components/PageHeader';
import { describeError } from '../error-messages';
import { routePath } from '../router';
import { useLoad } from '../use-load';

/** The machines with real browsers that the team's agents can work on. */
export function HostsScreen({ team }: { team: TeamView }) {
  const hosts = useLoad(() => listHosts(team.id), [team.id]);
  const list = [...(hosts.data?.hosts ?? [])].sort(
    (a, b) => Number(b.builtin) - Number(a.builtin) || a.name.localeCompare(b.name),
  );
  return (
    <>
      <PageHeader
        title="Hosts"
        subtitle={`Machines with real browsers that ${team.name} can work on.`}
        actions={
          <button type="button" class="btn btn-secondary" disabled={hosts.loading} onClick={() => void hosts.reload()}>
            Refresh
          </button>
        }
      />
      <section class="card" aria-label="Hosts">
        {hosts.error ? (
          <div class="card-body">
            <Banner tone="error">{describeError(hosts.error)}</Banner>
          </div>
        ) : !hosts.data ? (
          <Loading />
        ) : list.length === 0 ? (
          <p class="empty">This team has no hosts yet.</p>
        ) : (
          <ul class="rows">
            {list.map((host) => (
              <li class="row host-row" key={host.id}>
                <span class="host-icon" aria-hidden="true">
                  <Icon name="hosts" size={20} />
                </span>
                <div class="row-main">
                  <div class="row-title">
                    {host.name}
                    {host.builtin ? <span class="tag">Built-in</span> : null}
                  </div>
                  <div class="row-sub">
                    <span class={`presence presence-${host.online ? 'online' : 'offline'}`}>
                      <span class="presence-dot" aria-hidden="true" />
                      {host.online ? 'Online' : 'Offline'}
                    </span>
                  </div>
                </div>
                <div class="row-side">
                  {host.online ? (
                    <Link href={routePath({ name: 'host', teamId: team.id, hostId: host.id })} class="btn btn-primary btn-sm">
                      Connect
                    </Link>
                  ) : (
                    <span class="connect-note">Connect when it is online</span>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
