/**
 * The team's webhooks (`team-webhooks-v1`): owners and admins add an address with the
 * event kinds it hears and its body format, see the signing secret once (with a Copy
 * button), edit one (an empty address keeps the sealed one), send a test event, turn a
 * webhook off or delete it, and read its delivery log.
 * An address is shown masked; members are told why they see nothing.
 */

import { useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import type { Role, RouteResult } from '../../host/protocol';
import { useHostLoad } from '../../host/use-host-call';
import { formatDateTime } from '../../time-format';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { CopyField } from '../CopyField';
import { Loading } from '../Loading';

type Webhook = RouteResult<'team-webhooks-v1/list'>['webhooks'][number];
type Delivery = RouteResult<'team-webhooks-v1/deliveries'>['deliveries'][number];
type BodyFormat = 'standard' | 'slack';

export const WEBHOOK_KINDS: readonly { id: string; name: string }[] = [
  { id: 'run.finished', name: 'Run finished' },
  { id: 'run.failed', name: 'Run failed' },
  { id: 'approval.waiting', name: 'Approval waiting' },
];

const KIND_NAMES: Record<string, string> = { ...Object.fromEntries(WEBHOOK_KINDS.map((k) => [k.id, k.name])), 'webhook.test': 'Test event' };

export const MEMBER_REASON = 'Only admins and owners manage the team’s webhooks.';

export function kindNames(kinds: readonly string[]): string {
  return kinds.map((kind) => KIND_NAMES[kind] ?? kind).join(', ');
}

/** A delivery's line in the log: its status, attempts and the last answer. */
export function deliveryLine(delivery: Delivery): string {
  const attempts = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`;
  const answer = delivery.lastStatus !== null ? `last answer HTTP ${delivery.lastStatus}` : (delivery.lastError ?? 'not attempted yet');
  const next = delivery.status === 'pending' && delivery.nextAttemptAt !== null ? `, next try ${formatDateTime(delivery.nextAttemptAt)}` : '';
  return `${attempts}, ${answer}${next}`;
}

export function TeamWebhooksAdmin({ connection, role }: { connection: HostConnection; role: Role }) {
  if (role === 'member') {
    return (
      <section class="admin-panel card card-body" aria-label="Webhooks">
        <h2>Webhooks</h2>
        <Banner tone="info">{MEMBER_REASON}</Banner>
      </section>
    );
  }
  return <WebhooksPanel connection={connection} />;
}

function WebhooksPanel({ connection }: { connection: HostConnection }) {
  const list = useHostLoad(connection, 'team-webhooks-v1/list', {}, []);
  const [secret, setSecret] = useState<{ name: string; value: string; rotated: boolean } | null>(null);
  if (list.error) return <Banner tone="error">{describeError(list.error)}</Banner>;
  if (!list.data) return <Loading />;
  return (
    <section class="admin-panel card card-body" aria-label="Webhooks">
      <h2>Webhooks</h2>
      <p class="muted">Addresses told when a routine’s run ends and when an agent waits for a person. Each delivery is signed (Standard Webhooks) and retried for about a day.</p>
      {secret ? (
        <div class="webhook-secret" data-secret-shown="true">
          <Banner tone="success">
            {secret.rotated ? `“${secret.name}” has a new signing secret; the one before it also signs for a day.` : `“${secret.name}” is added.`} Copy its signing secret now: it is not shown again.
          </Banner>
          <CopyField id="webhook-secret" label="Signing secret" value={secret.value} />
          <button type="button" class="btn btn-secondary btn-sm" onClick={() => setSecret(null)}>
            Done
          </button>
        </div>
      ) : null}
      {list.data.webhooks.length === 0 ? <p class="empty">No webhooks yet.</p> : null}
      <ul class="admin-list" aria-label="Webhooks">
        {list.data.webhooks.map((webhook) => (
          <WebhookRow key={webhook.id} connection={connection} webhook={webhook} onChanged={list.reload} onSecret={(value) => setSecret({ name: webhook.name, value, rotated: true })} />
        ))}
      </ul>
      <AddWebhook
        connection={connection}
        onAdded={(name, value) => {
          setSecret({ name, value, rotated: false });
          list.reload();
        }}
      />
    </section>
  );
}

/** What the add and edit forms hold. An empty address on edit keeps the sealed one. */
export interface WebhookForm {
  name: string;
  url: string;
  kinds: string[];
  bodyFormat: BodyFormat;
}

export const NEW_WEBHOOK: WebhookForm = { name: '', url: '', kinds: ['run.failed', 'approval.waiting'], bodyFormat: 'standard' };

/** The edit form's body for `team-webhooks-v1/update`: only what changed (`null` for nothing). */
export function updateBody(webhook: Webhook, form: WebhookForm): { id: string; name?: string; url?: string; kinds?: string[]; bodyFormat?: BodyFormat } | null {
  const body: { id: string; name?: string; url?: string; kinds?: string[]; bodyFormat?: BodyFormat } = { id: webhook.id };
  if (form.name.trim() !== webhook.name) body.name = form.name.trim();
  if (form.url.trim() !== '') body.url = form.url.trim();
  const kinds = WEBHOOK_KINDS.map((k) => k.id).filter((id) => form.kinds.includes(id));
  if (kinds.join() !== webhook.kinds.join()) body.kinds = kinds;
  if (form.bodyFormat !== webhook.bodyFormat) body.bodyFormat = form.bodyFormat;
  return Object.keys(body).length > 1 ? body : null;
}

function AddWebhook({ connection, onAdded }: { connection: HostConnection; onAdded: (name: string, secret: string) => void }) {
  return (
    <WebhookFields
      label="Add a webhook"
      submitText="Add webhook"
      start={NEW_WEBHOOK}
      onSubmit={async (form) => {
        const created = await connection.call('team-webhooks-v1/create', { name: form.name.trim(), url: form.url.trim(), kinds: form.kinds, bodyFormat: form.bodyFormat });
        onAdded(created.webhook.name, created.secret);
      }}
    />
  );
}

function WebhookFields(props: { label: string; submitText: string; start: WebhookForm; editing?: boolean; onSubmit: (form: WebhookForm) => Promise<void>; onCancel?: () => void }) {
  const { label, submitText, start, editing = false, onSubmit, onCancel } = props;
  const [form, setForm] = useState<WebhookForm>(start);
  const [error, setError] = useState<unknown>(null);
  const set = (change: Partial<WebhookForm>) => setForm((old) => ({ ...old, ...change }));
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      await onSubmit(form);
      // The address may carry a token: it leaves its input once the host has it.
      setForm({ ...start, url: '' });
    } catch (failure) {
      setError(failure);
    }
  };
  const toggle = (kind: string, on: boolean) => set({ kinds: on ? [...form.kinds, kind] : form.kinds.filter((k) => k !== kind) });
  return (
    <form class="admin-form" aria-label={label} onSubmit={(event) => void submit(event)}>
      {editing ? null : <h3>{label}</h3>}
      <label>
        Name
        <input type="text" value={form.name} maxLength={100} onInput={(e) => set({ name: e.currentTarget.value })} required />
      </label>
      <label>
        Address
        <input
          type="url"
          aria-label="Address"
          value={form.url}
          placeholder={editing ? 'Leave empty to keep the saved address' : 'https://hooks.slack.com/services/…'}
          autoComplete="off"
          onInput={(e) => set({ url: e.currentTarget.value })}
          required={!editing}
        />
        <span class="admin-muted">Its path and query are sealed and shown masked.</span>
      </label>
      <fieldset>
        <legend>Events</legend>
        {WEBHOOK_KINDS.map((kind) => (
          <label key={kind.id} class="admin-inline">
            <input type="checkbox" value={kind.id} checked={form.kinds.includes(kind.id)} onChange={(e) => toggle(kind.id, e.currentTarget.checked)} />
            {kind.name}
          </label>
        ))}
      </fieldset>
      <label>
        Body
        <select aria-label="Body" value={form.bodyFormat} onChange={(e) => set({ bodyFormat: e.currentTarget.value as BodyFormat })}>
          <option value="standard">Standard Webhooks JSON</option>
          <option value="slack">Chat text (Slack, Mattermost, Discord’s /slack address)</option>
        </select>
      </label>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="admin-inline">
        <button type="submit" class="btn btn-primary btn-sm" disabled={form.kinds.length === 0}>
          {submitText}
        </button>
        {onCancel ? (
          <button type="button" class="btn btn-secondary btn-sm" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

function WebhookRow(props: { connection: HostConnection; webhook: Webhook; onChanged: () => void; onSecret: (secret: string) => void }) {
  const { connection, webhook, onChanged, onSecret } = props;
  const [error, setError] = useState<unknown>(null);
  const [tested, setTested] = useState<Delivery | null>(null);
  const [showLog, setShowLog] = useState(false);
  const [editing, setEditing] = useState(false);
  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      onChanged();
    } catch (failure) {
      setError(failure);
    }
  };
  const test = () =>
    run(async () => {
      setTested(await connection.call('team-webhooks-v1/test', { id: webhook.id }));
    });
  return (
    <li class="admin-row" data-webhook={webhook.id}>
      <div class="admin-row-head">
        <strong>{webhook.name}</strong>
        <span class="admin-muted">{webhook.enabled ? 'On' : 'Off'}</span>
      </div>
      <p class="admin-muted mono">{webhook.url}</p>
      <p class="admin-muted">
        {kindNames(webhook.kinds)} · {webhook.bodyFormat === 'slack' ? 'chat text' : 'Standard Webhooks JSON'}
      </p>
      {tested ? (
        <Banner tone={tested.status === 'delivered' ? 'success' : 'error'}>
          {tested.status === 'delivered' ? 'The test event was delivered.' : `The test event failed: ${tested.lastError ?? 'no answer'}.`}
        </Banner>
      ) : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="admin-inline">
        <button type="button" class="btn btn-secondary btn-sm" onClick={() => void test()}>
          Send a test event
        </button>
        <button type="button" class="btn btn-secondary btn-sm" onClick={() => void run(() => connection.call('team-webhooks-v1/update', { id: webhook.id, enabled: !webhook.enabled }))}>
          {webhook.enabled ? 'Turn off' : 'Turn on'}
        </button>
        <button type="button" class="btn btn-secondary btn-sm" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          Edit
        </button>
        <button type="button" class="btn btn-secondary btn-sm" aria-expanded={showLog} onClick={() => setShowLog(!showLog)}>
          Delivery log
        </button>
        <ConfirmButton
          label="New secret"
          question={`Make a new signing secret for “${webhook.name}”? The current one keeps signing for a day, then stops.`}
          confirmLabel="New secret"
          tone="secondary"
          size="sm"
          onConfirm={() => run(async () => onSecret((await connection.call('team-webhooks-v1/rotate_secret', { id: webhook.id })).secret))}
        />
        <ConfirmButton
          label="Delete"
          question={`Delete “${webhook.name}” and its delivery log?`}
          confirmLabel="Delete"
          tone="secondary"
          size="sm"
          onConfirm={() => run(() => connection.call('team-webhooks-v1/delete', { id: webhook.id }))}
        />
      </div>
      {editing ? (
        <WebhookFields
          label={`Edit ${webhook.name}`}
          submitText="Save"
          editing
          start={{ name: webhook.name, url: '', kinds: [...webhook.kinds], bodyFormat: webhook.bodyFormat === 'slack' ? 'slack' : 'standard' }}
          onCancel={() => setEditing(false)}
          onSubmit={async (form) => {
            const body = updateBody(webhook, form);
            if (body) await connection.call('team-webhooks-v1/update', body);
            setEditing(false);
            onChanged();
          }}
        />
      ) : null}
      {showLog ? <DeliveryLog connection={connection} webhookId={webhook.id} refresh={tested?.id ?? ''} /> : null}
    </li>
  );
}

function DeliveryLog({ connection, webhookId, refresh }: { connection: HostConnection; webhookId: string; refresh: string }) {
  const log = useHostLoad(connection, 'team-webhooks-v1/deliveries', { id: webhookId, limit: 50 }, []);
  const [seen, setSeen] = useState(refresh);
  if (seen !== refresh) {
    setSeen(refresh);
    log.reload();
  }
  if (log.error) return <Banner tone="error">{describeError(log.error)}</Banner>;
  if (!log.data) return <Loading />;
  if (log.data.deliveries.length === 0) return <p class="empty">Nothing sent yet.</p>;
  return (
    <ul class="admin-list" aria-label="Delivery log">
      {log.data.deliveries.map((delivery) => (
        <li key={delivery.id} class="admin-row" data-delivery={delivery.id} data-status={delivery.status}>
          <div class="admin-row-head">
            <span>{kindNames([delivery.kind])}</span>
            <span class={`chip delivery-${delivery.status}`}>{delivery.status}</span>
          </div>
          <p class="admin-muted">
            {formatDateTime(delivery.createdAt)} · {deliveryLine(delivery)}
          </p>
        </li>
      ))}
    </ul>
  );
}
