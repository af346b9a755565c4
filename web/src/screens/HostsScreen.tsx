import { useState } from 'preact/hooks';
import { createEnrolment, listHosts, removeHost } from '../api/endpoints';
import type { TeamView } from '../api/types';
import { Banner } from '../components/Banner';
import { ConfirmButton } from '../components/ConfirmButton';
import { CopyField } from '../components/CopyField';
import { Field } from '../components/Field';
import { Icon } from '../components/Icon';
import { Link } from '../components/Link';
import { Loading } from '../components/Loading';
import { PageHeader } from '../components/PageHeader';
import { describeError, formErrors, NO_ERRORS } from '../error-messages';
import { routePath } from '../router';
import { useLoad } from '../use-load';

/** The machines with real browsers that the team's agents can work on. */
export function HostsScreen({ team }: { team: TeamView }) {
  const hosts = useLoad(() => listHosts(team.id), [team.id]);
  const isOwner = team.role === 'owner';
  const [failure, setFailure] = useState<string | null>(null);
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
      {isOwner ? <AddHost team={team} onAdded={() => void hosts.reload()} /> : null}
      {failure ? <Banner tone="error">{failure}</Banner> : null}
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
                <div class="row-side host-actions">
                  {isOwner && !host.builtin ? (
                    <ConfirmButton
                      label="Remove"
                      question={`Remove ${host.name}? Its live connections end.`}
                      confirmLabel="Remove"
                      size="sm"
                      onConfirm={async () => {
                        setFailure(null);
                        try {
                          await removeHost(team.id, host.id);
                          await hosts.reload();
                        } catch (error) {
                          setFailure(describeError(error));
                        }
                      }}
                    />
                  ) : null}
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

/** An owner adds a machine: a one-time code and the command to run on it. */
function AddHost({ team, onAdded }: { team: TeamView; onAdded: () => void }) {
  const [name, setName] = useState('');
  const [errors, setErrors] = useState<{ fields: { name?: string }; banner: string | null }>(NO_ERRORS);
  const [busy, setBusy] = useState(false);
  const [command, setCommand] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setErrors(NO_ERRORS);
    try {
      const created = await createEnrolment(team.id, name.trim());
      setCommand(created.command);
      setName('');
      onAdded();
    } catch (error) {
      setErrors(formErrors(error, ['name']));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="card card-body" aria-label="Add a host">
      <h2>Add a host</h2>
      <p class="muted">Run Crewhost on another machine (a lab server, a desktop with a home connection) and link it to this team.</p>
      <form class="inline-form" onSubmit={(event) => void submit(event)}>
        <Field id="host-name" label="Host name" value={name} onValue={setName} error={errors.fields.name} maxLength={60} autoComplete="off" />
        <button type="submit" class="btn btn-primary" disabled={busy || !name.trim()}>
          Create enrolment code
        </button>
      </form>
      {errors.banner ? <Banner tone="error">{errors.banner}</Banner> : null}
      {command ? (
        <div class="enrol-command">
          <CopyField id="enrol-command" label="Run this on the new machine (the code works once, for a short time)" value={command} />
        </div>
      ) : null}
    </section>
  );
}
