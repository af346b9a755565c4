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
import { EVENT } from '../../host/protocol';
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
  onOpenThread?: (request: AttentionRequest) => void;
}) {
  if (props.requests.length === 0) return null;
  return (
    <ul class="attention-cards" aria-label="Requests from agents">
      {props.requests.map((request) => (
        <li key={request.id} class="card attention-card" data-kind={request.kind}>
          <p class="attention-who">
            <strong>{props.agentNames.get(request.agentId) ?? 'An agent'}</strong>
            {request.kind === 'question' ? ' asks you' : ' asks for your consent'}
            {props.onOpenThread ? (
              <button type="button" class="btn btn-ghost btn-sm" onClick={() => props.onOpenThread?.(request)}>
                Open chat
              </button>
            ) : null}
          </p>
          {request.kind === 'question' ? <QuestionCard connection={props.connection} request={request} /> : <ConsentCard connection={props.connection} request={request} alwaysAllow={props.alwaysAllow} />}
        </li>
      ))}
    </ul>
  );
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
      <p class="attention-what">
        {request.summary.startsWith(request.tool) ? null : <code>{request.tool}</code>} {request.summary}
      </p>
      {allowed ? (
        <label class="attention-option">
          <input type="checkbox" checked={always} onChange={(e) => setAlways(e.currentTarget.checked)} />
          Always allow {family} for this agent
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
