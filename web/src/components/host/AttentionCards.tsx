/**
 * Requests from agents that wait for a person: a consent card per gated call (what will
 * happen, on which page, Approve / Deny) and a card per `ask_user` question (free text, or
 * one or several of the agent's options). A request answered here or elsewhere goes.
 */

import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import {
  alwaysAllowPermissions,
  attentionAfterEvent,
  consentAnswer,
  questionForm,
  questionReply,
  toggleChoice,
  type AttentionRequest,
} from '../../host/attention';
import type { HostConnection } from '../../host/connection';
import type { components } from '../../host/schema';
import { EVENT, type RouteArgs } from '../../host/protocol';
import { alwaysAllowText } from '../../host/tool-families';
import { Banner } from '../Banner';

/** The requests this member may answer, kept current by the host's events. */
export function useAttention(connection: HostConnection, enabled: boolean): AttentionRequest[] {
  const [requests, setRequests] = useState<AttentionRequest[]>([]);
  useEffect(() => {
    if (!enabled) return undefined;
    // Events that arrive before the list answers are kept; a request resolved meanwhile
    // stays gone even when the list still had it.
    const resolved = new Set<string>();
    const off = connection.onEvent((event) => {
      const id = (event.data as { id?: unknown } | null)?.id;
      if (event.event === EVENT.attentionResolved && typeof id === 'string') resolved.add(id);
      setRequests((old) => attentionAfterEvent(old, event));
    });
    connection.call('attention-v1/list', {}).then(
      // The list's copy wins: it carries the arguments' hash that an approval names.
      (list) => setRequests((old) => [...list.requests.filter((r) => !resolved.has(r.id)), ...old.filter((o) => !list.requests.some((r) => r.id === o.id))]),
      () => undefined,
    );
    return off;
  }, [connection, enabled]);
  return requests;
}

/** For owners and admins: each agent's permissions and the gated tools' families. */
export interface AlwaysAllow {
  permissions(agentId: string): Readonly<Record<string, string>> | null;
  familyOfTool: Readonly<Record<string, string>>;
}

export function AttentionCards(props: {
  connection: HostConnection;
  requests: AttentionRequest[];
  agentNames: ReadonlyMap<string, string>;
  alwaysAllow: AlwaysAllow | null;
  /** An owner or admin: may save a secret to the vault and add a requested vault item. */
  manager: boolean;
  onOpenThread?: (request: AttentionRequest) => void;
}) {
  if (props.requests.length === 0) return null;
  return (
    <ul class="attention-cards" aria-label="Requests from agents">
      {props.requests.map((request) => (
        <li key={request.id} class="card attention-card" data-kind={request.kind}>
          <p class="attention-who">
            <strong>{props.agentNames.get(request.agentId) ?? 'An agent'}</strong>
            {WHO_ASKS[request.kind] ?? ' asks for your consent'}
            {props.onOpenThread ? (
              <button type="button" class="btn btn-ghost btn-sm" onClick={() => props.onOpenThread?.(request)}>
                Open chat
              </button>
            ) : null}
          </p>
          {request.kind === 'question' ? (
            <QuestionCard connection={props.connection} request={request} />
          ) : request.kind === 'secret' && request.secret ? (
            <SecretCard connection={props.connection} request={request} details={request.secret} manager={props.manager} />
          ) : request.kind === 'vaultItem' && request.vaultItem ? (
            <VaultItemCard connection={props.connection} request={request} details={request.vaultItem} manager={props.manager} />
          ) : (
            <ConsentCard connection={props.connection} request={request} alwaysAllow={props.alwaysAllow} />
          )}
        </li>
      ))}
    </ul>
  );
}

const WHO_ASKS: Record<string, string> = {
  question: ' asks you',
  secret: ' needs a secret for a page',
  vaultItem: ' asks to add an item to the vault',
};

// Fields a person types a secret into are masked; a user name is not a secret.
const MASKED: ReadonlySet<string> = new Set(['password', 'oneTimeCode', 'cardNumber', 'securityCode', 'other']);

/**
 * A request for a secret (`submit_secret`): the page's origin and the fields it needs, one
 * input each. What is typed goes to the host on `browser-secret-handoff-v1` and is emptied
 * from the card as it is sent; it is never shown back, never kept, never in the chat.
 */
function SecretCard(props: { connection: HostConnection; request: AttentionRequest; details: SecretRequestDetails; manager: boolean }) {
  const { connection, request, details } = props;
  const [values, setValues] = useState<string[]>(() => details.fields.map(() => ''));
  const [save, setSave] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const send = async (event: Event) => {
    event.preventDefault();
    const sent = values;
    setValues(details.fields.map(() => ''));
    setBusy(true);
    setError(null);
    try {
      if (save && props.manager && details.vaultOffered) await connection.call('browser-secret-vault-v1/submit', { id: request.id, values: sent });
      else await connection.call('browser-secret-handoff-v1/submit', { id: request.id, values: sent });
    } catch (failure) {
      setBusy(false);
      setError(failure);
    }
  };
  const decline = async () => {
    setBusy(true);
    try {
      await connection.call('browser-secret-handoff-v1/decline', { id: request.id, kind: 'secret' });
    } catch (failure) {
      setBusy(false);
      setError(failure);
    }
  };
  return (
    <form class="attention-secret" onSubmit={(event) => void send(event)} autocomplete="off">
      <p class="attention-what">
        For <strong>{details.origin}</strong>: {details.purpose || request.summary}
      </p>
      {details.fields.map((field, index) => (
        <label key={`${index}-${field.label}`} class="field">
          <span>{field.label || 'Secret'}</span>
          <input
            type={MASKED.has(field.kind) ? 'password' : 'text'}
            autocomplete="off"
            spellcheck={false}
            value={values[index] ?? ''}
            required
            onInput={(e) => {
              const next = [...values];
              next[index] = e.currentTarget.value;
              setValues(next);
            }}
          />
        </label>
      ))}
      {details.vaultOffered ? (
        <label class="attention-option" title={props.manager ? undefined : 'Only owners and admins save to the vault'}>
          <input type="checkbox" checked={save && props.manager} disabled={!props.manager} onChange={(e) => setSave(e.currentTarget.checked)} />
          Save to the vault as a login for {details.origin}
          {props.manager ? null : <span class="field-hint"> (only owners and admins save to the vault)</span>}
        </label>
      ) : null}
      <p class="field-hint">The agent never sees what you type: the host enters it into the page.</p>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="attention-actions">
        <button type="submit" class="btn btn-primary btn-sm" disabled={busy}>
          Enter it
        </button>
        <button type="button" class="btn btn-secondary btn-sm" disabled={busy} onClick={() => void decline()}>
          Decline
        </button>
      </div>
    </form>
  );
}

// The fields a person fills for each kind of vault item, and which of them are secrets.
const ITEM_FIELDS: Record<string, ReadonlyArray<readonly [string, string, boolean]>> = {
  login: [['name', 'Name', false], ['username', 'User name', false], ['password', 'Password', true], ['notes', 'Notes', false]],
  card: [['name', 'Name', false], ['cardholder', 'Cardholder', false], ['number', 'Card number', true], ['expiry', 'Expiry (MM/YYYY)', false], ['securityCode', 'Security code', true], ['billingAddress', 'Billing address', false]],
  contact: [['name', 'Name', false], ['email', 'Email', false], ['phone', 'Phone', false], ['postalAddress', 'Postal address', false]],
};

/**
 * A request to add a vault item (`request_vault_item`), prefilled with the agent's
 * non-secret values; owners and admins add it (`browser-secret-vault-v1/add_item`), and the
 * agent learns only the new item's id, kind and name. Members may decline it.
 */
function VaultItemCard(props: { connection: HostConnection; request: AttentionRequest; details: VaultItemRequestDetails; manager: boolean }) {
  const { connection, request, details } = props;
  const fields = ITEM_FIELDS[details.kind] ?? [];
  const initial = () => Object.fromEntries(fields.map(([name, , secret]) => [name, secret ? '' : String(details.prefill[name] ?? '')]));
  const [values, setValues] = useState<Record<string, string>>(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const sites = Array.isArray(details.prefill.sites) ? details.prefill.sites.map(String) : [];
  const add = async (event: Event) => {
    event.preventDefault();
    const item: Record<string, unknown> = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ''));
    if (details.kind === 'login' && sites.length) item.sites = sites;
    setValues(initial());
    setBusy(true);
    setError(null);
    try {
      const args = { id: request.id, ...item } as RouteArgs<'browser-secret-vault-v1/add_item'>;
      await connection.call('browser-secret-vault-v1/add_item', args);
    } catch (failure) {
      setBusy(false);
      setError(failure);
    }
  };
  const decline = async () => {
    setBusy(true);
    try {
      await connection.call('browser-secret-handoff-v1/decline', { id: request.id, kind: 'vaultItem' });
    } catch (failure) {
      setBusy(false);
      setError(failure);
    }
  };
  return (
    <form class="attention-secret" onSubmit={(event) => void add(event)} autocomplete="off">
      <p class="attention-what">{details.reason || request.summary}</p>
      {sites.length ? <p class="field-hint">For {sites.join(', ')}</p> : null}
      {props.manager ? (
        fields.map(([name, label, secret]) => (
          <label key={name} class="field">
            <span>{label}</span>
            <input
              type={secret ? 'password' : 'text'}
              autocomplete="off"
              required={name === 'name'}
              value={values[name] ?? ''}
              onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })}
            />
          </label>
        ))
      ) : (
        <p class="field-hint">Only owners and admins add items to the vault.</p>
      )}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="attention-actions">
        {props.manager ? (
          <button type="submit" class="btn btn-primary btn-sm" disabled={busy}>
            Add to the vault
          </button>
        ) : null}
        <button type="button" class="btn btn-secondary btn-sm" disabled={busy} onClick={() => void decline()}>
          Decline
        </button>
      </div>
    </form>
  );
}

type SecretRequestDetails = components['schemas']['SecretRequestDetails'];
type VaultItemRequestDetails = components['schemas']['VaultItemRequestDetails'];

/** The call as the agent made it: its tool and arguments. */
function rawCall(request: AttentionRequest): string {
  return request.summary.startsWith(request.tool) ? request.summary : `${request.tool} ${request.summary}`;
}

function ConsentCard({ connection, request, alwaysAllow }: { connection: HostConnection; request: AttentionRequest; alwaysAllow: AlwaysAllow | null }) {
  const [busy, setBusy] = useState(false);
  const [always, setAlways] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const agentPermissions = alwaysAllow?.permissions(request.agentId) ?? null;
  const allowed = alwaysAllow && agentPermissions ? alwaysAllowPermissions(request, { permissions: agentPermissions, familyOfTool: alwaysAllow.familyOfTool }) : null;
  const family = alwaysAllow?.familyOfTool[request.tool];
  const answer = async (approve: boolean) => {
    setBusy(true);
    setError(null);
    try {
      // The permission changes first, so a failure leaves the call waiting, not half-done.
      if (approve && always && allowed) await connection.call('agents-v1/update', { id: request.agentId, permissions: allowed });
      await connection.call('attention-v1/answer', consentAnswer(request, approve));
    } catch (failure) {
      setBusy(false);
      setError(failure);
    }
  };
  return (
    <>
      {request.description ? (
        <>
          <p class="attention-what">{request.description}</p>
          {/* The host's sentence first; the raw call (a script's code too) behind Details. */}
          <details class="attention-details">
            <summary>Details</summary>
            <pre>{rawCall(request)}</pre>
          </details>
        </>
      ) : (
        <p class="attention-what">
          {request.summary.startsWith(request.tool) ? null : <code>{request.tool}</code>} {request.summary}
        </p>
      )}
      {allowed && family ? (
        <label class="attention-option">
          <input type="checkbox" checked={always} onChange={(e) => setAlways(e.currentTarget.checked)} />
          {alwaysAllowText(family)}
        </label>
      ) : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="attention-actions">
        <button type="button" class="btn btn-primary btn-sm" disabled={busy} onClick={() => void answer(true)}>
          Approve
        </button>
        <button type="button" class="btn btn-secondary btn-sm" disabled={busy} onClick={() => void answer(false)}>
          Deny
        </button>
      </div>
    </>
  );
}

function QuestionCard({ connection, request }: { connection: HostConnection; request: AttentionRequest }) {
  const [chosen, setChosen] = useState<string[]>([]);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const form = questionForm(request);
  const reply = questionReply(request, chosen, text);
  const send = (event: Event) => {
    event.preventDefault();
    if (!reply) return;
    setBusy(true);
    setError(null);
    connection.call('attention-v1/reply', reply).then(
      () => undefined,
      (failure: unknown) => {
        setBusy(false);
        setError(failure);
      },
    );
  };
  return (
    <form onSubmit={send} class="attention-question">
      <p class="attention-what">{request.question ?? request.summary}</p>
      {form.kind === 'text' ? (
        <textarea aria-label="Your answer" rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      ) : (
        <fieldset class="attention-options">
          <legend class="sr-only">{form.kind === 'multiple' ? 'Choose any' : 'Choose one'}</legend>
          {form.options.map((option) => (
            <label key={option} class="attention-option">
              <input
                type={form.kind === 'multiple' ? 'checkbox' : 'radio'}
                name={`q-${request.id}`}
                checked={chosen.includes(option)}
                onChange={() => setChosen((old) => toggleChoice(request, old, option))}
              />
              {option}
            </label>
          ))}
        </fieldset>
      )}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <button type="submit" class="btn btn-primary btn-sm" disabled={busy || !reply}>
        Answer
      </button>
    </form>
  );
}
