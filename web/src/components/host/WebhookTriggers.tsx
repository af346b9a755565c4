/**
 * A routine's webhook triggers (`routines-v1/hooks-*`), for the routine's page of the
 * Routines screen: the list (URL, event types, on or off), a new trigger, a new secret,
 * deleting one. A secret is shown once, right after it is made, with a `curl` example
 * that signs a delivery; once dismissed it is gone from the page for good.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { curlExample, eventTypesFrom, hookUrl } from '../../host/hook-sender';
import type { RouteResult } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { CopyField } from '../CopyField';
import { Loading } from '../Loading';

type Created = RouteResult<'routines-v1/hooks-create'>;

export function WebhookTriggers(props: { connection: HostConnection; routineId: string; hubOrigin?: string }) {
  const { connection, routineId } = props;
  const origin = props.hubOrigin ?? window.location.origin;
  const hooks = useHostLoad(connection, 'routines-v1/hooks-list', { routineId }, []);
  const [shown, setShown] = useState<Created | null>(null);
  const [eventTypes, setEventTypes] = useState('');
  const [error, setError] = useState<unknown>(null);

  const act = async (run: () => Promise<Created | null>) => {
    setError(null);
    try {
      const made = await run();
      if (made) setShown(made);
      hooks.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  const create = (event: Event) => {
    event.preventDefault();
    const types = eventTypesFrom(eventTypes);
    void act(() => connection.call('routines-v1/hooks-create', { routineId, filters: { equals: [], eventTypes: types, eventTypeField: 'type' }, enabled: true }));
    setEventTypes('');
  };

  if (hooks.error) return <Banner tone="error">{describeError(hooks.error)}</Banner>;
  if (!hooks.data) return <Loading />;
  return (
    <section class="admin-panel card card-body" aria-label="Webhook triggers">
      <h3>Webhook triggers</h3>
      <p class="muted">Another system starts a run by posting a signed delivery to a trigger’s URL. Its body reaches the agent as untrusted data.</p>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      {shown ? (
        <div class="hook-secret" role="region" aria-label="New secret">
          <Banner tone="info">Copy the secret now: it is shown this once.</Banner>
          <CopyField id={`hook-url-${shown.hook.id}`} label="URL" value={hookUrl(origin, shown.hook.path)} />
          <CopyField id={`hook-secret-${shown.hook.id}`} label="Secret" value={shown.secret} />
          <p class="field-hint">A delivery signed from a shell:</p>
          <pre class="mono hook-curl">{curlExample(hookUrl(origin, shown.hook.path), shown.secret)}</pre>
          <button type="button" class="btn btn-secondary" onClick={() => setShown(null)}>
            I have saved it
          </button>
        </div>
      ) : null}
      {hooks.data.hooks.length === 0 ? <p class="admin-muted">No triggers yet.</p> : null}
      <ul class="hook-list">
        {hooks.data.hooks.map((hook) => (
          <li key={hook.id} data-hook={hook.id}>
            <code class="mono">{hookUrl(origin, hook.path)}</code>
            <span class="admin-muted">
              {' · '}
              {hook.filters.eventTypes.length ? hook.filters.eventTypes.join(', ') : 'every event'}
              {hook.enabled ? '' : ' · off'}
              {hook.previousSecretUntil ? ` · previous secret valid until ${new Date(hook.previousSecretUntil * 1000).toLocaleString()}` : ''}
            </span>
            <button type="button" class="btn btn-secondary btn-sm" onClick={() => void act(() => connection.call('routines-v1/hooks-rotate', { hookId: hook.id }))}>
              New secret
            </button>
            <ConfirmButton
              label="Delete"
              question="Delete this trigger? Its sender will be refused."
              confirmLabel="Delete"
              size="sm"
              onConfirm={() => act(async () => (await connection.call('routines-v1/hooks-delete', { hookId: hook.id }), null))}
            />
          </li>
        ))}
      </ul>
      <form class="admin-form" aria-label="New webhook trigger" onSubmit={create}>
        <label>
          Event types (optional)
          <input type="text" value={eventTypes} placeholder="build.failed, deploy.finished" onInput={(e) => setEventTypes(e.currentTarget.value)} />
          <span class="admin-muted">Only deliveries whose body’s “type” is one of these start a run.</span>
        </label>
        <button type="submit" class="btn btn-primary">
          Add trigger
        </button>
      </form>
    </section>
  );
}
