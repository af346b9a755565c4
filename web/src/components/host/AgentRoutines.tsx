/**
 * An agent's routines, inside its row in Agents: each routine's schedule in words with its
 * next three times, run now, turn on or off, delete, and its run history with status
 * chips, its webhook triggers; and a form whose schedule builder shows the schedule in words and its next times
 * as they are picked. The host decides who reaches what: owners and admins every routine;
 * a member their own, and the runs of routines shown to them.
 */

import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import { EVENT, type RouteResult } from '../../host/protocol';
import { WEEKDAYS, emptyDraft, scheduleArgs, statusTone, statusWords, triggerWords, type Repeat, type ScheduleDraft } from '../../host/routine-form';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { WebhookTriggers } from './WebhookTriggers';

type RoutineView = RouteResult<'routines-v1/list'>['routines'][number];
type ScheduleView = RouteResult<'routines-v1/preview'>;
const RUN_EVENTS = [EVENT.routineRunStarted, EVENT.routineRunFinished];

export function AgentRoutines(props: { connection: HostConnection; agentId: string; accountId: string | null; canManageAll: boolean }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="agent-routines" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Routines</summary>
      {open ? <RoutineList {...props} /> : null}
    </details>
  );
}

function RoutineList(props: { connection: HostConnection; agentId: string; accountId: string | null; canManageAll: boolean }) {
  const { connection, agentId } = props;
  const list = useHostLoad(connection, 'routines-v1/list', { agentId }, RUN_EVENTS);
  const [error, setError] = useState<unknown>(null);
  const [adding, setAdding] = useState(false);
  const run = (call: Promise<unknown>) => {
    setError(null);
    call.then(() => list.reload(), setError);
  };
  const routines = list.data?.routines ?? [];
  return (
    <div class="routine-list">
      {list.error ? <Banner tone="error">{describeError(list.error)}</Banner> : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      {list.data && routines.length === 0 ? <p class="admin-muted">No routines yet: an agent can work on a schedule with nobody in the chat.</p> : null}
      <ul class="admin-list">
        {routines.map((routine) => (
          <RoutineRow key={`${routine.id}:${routine.updatedAt}`} routine={routine} connection={connection} manages={props.canManageAll || routine.createdBy === props.accountId} run={run} />
        ))}
      </ul>
      {adding ? (
        <RoutineForm connection={connection} agentId={agentId} onDone={() => (setAdding(false), list.reload())} />
      ) : (
        <button type="button" class="btn btn-secondary btn-sm" onClick={() => setAdding(true)}>
          New routine…
        </button>
      )}
    </div>
  );
}

function RoutineRow(props: { routine: RoutineView; connection: HostConnection; manages: boolean; run: (call: Promise<unknown>) => void }) {
  const { routine, connection, manages, run } = props;
  const [history, setHistory] = useState(false);
  const [triggers, setTriggers] = useState(false);
  const ref = { routineId: routine.id };
  const toggle = () =>
    run(
      connection.call('routines-v1/update', {
        ...ref,
        name: routine.name,
        message: routine.message,
        schedule: scheduleOf(routine.schedule),
        threadPolicy: routine.threadPolicy as 'new' | 'continue',
        audience: routine.audience as 'creator' | 'members' | 'team',
        audienceMembers: routine.audienceMembers,
        approvers: routine.approvers,
        approvalSeconds: routine.approvalSeconds,
        overlap: routine.overlap as 'skip' | 'queue',
        missed: routine.missed as 'once' | 'skip',
        enabled: !routine.enabled,
      }),
    );
  return (
    <li class="admin-row routine-row" data-routine={routine.id}>
      <p class="routine-name">
        <strong>{routine.name}</strong> <span class={`chip routine-chip-${routine.enabled ? 'good' : 'quiet'}`}>{routine.enabled ? 'On' : 'Off'}</span>
      </p>
      <ScheduleWords schedule={routine.schedule} enabled={routine.enabled} />
      <div class="admin-inline">
        {manages ? (
          <>
            <button type="button" class="btn btn-primary btn-sm" onClick={() => (run(connection.call('routines-v1/run', ref)), setHistory(true))}>
              Run now
            </button>
            <button type="button" class="btn btn-secondary btn-sm" aria-pressed={routine.enabled} onClick={toggle}>
              {routine.enabled ? 'Turn off' : 'Turn on'}
            </button>
            <button type="button" class="btn btn-danger btn-sm" onClick={() => run(connection.call('routines-v1/delete', ref))}>
              Delete
            </button>
          </>
        ) : null}
        <button type="button" class="btn btn-ghost btn-sm" aria-expanded={history} onClick={() => setHistory(!history)}>
          {history ? 'Hide runs' : 'Runs'}
        </button>
        {manages ? (
          <button type="button" class="btn btn-ghost btn-sm" aria-expanded={triggers} onClick={() => setTriggers(!triggers)}>
            {triggers ? 'Hide webhook triggers' : 'Webhook triggers'}
          </button>
        ) : null}
      </div>
      {history ? <RunHistory connection={connection} routineId={routine.id} /> : null}
      {triggers ? <WebhookTriggers connection={connection} routineId={routine.id} /> : null}
    </li>
  );
}

function scheduleOf(view: ScheduleView) {
  if (view.kind === 'every') return { kind: 'every' as const, everySeconds: view.everySeconds ?? 60 };
  if (view.kind === 'once') return { kind: 'once' as const, at: view.at ?? 0 };
  return { kind: 'cron' as const, cron: view.cron ?? '', timeZone: view.timeZone ?? 'UTC' };
}

function ScheduleWords(props: { schedule: ScheduleView; enabled?: boolean }) {
  const { schedule } = props;
  const next = props.enabled === false ? [] : schedule.nextTimesLocal;
  return (
    <p class="admin-muted routine-schedule">
      {schedule.words}
      {next.length ? `: ${next.join(', ')}` : props.enabled === false ? '' : ': no more times'}
    </p>
  );
}

function RunHistory(props: { connection: HostConnection; routineId: string }) {
  const runs = useHostLoad(props.connection, 'routines-v1/history', { routineId: props.routineId, limit: 20 }, RUN_EVENTS);
  if (runs.error) return <Banner tone="error">{describeError(runs.error)}</Banner>;
  const list = runs.data?.runs ?? [];
  if (runs.data && list.length === 0) return <p class="admin-muted">No runs yet.</p>;
  return (
    <ol class="routine-runs" aria-label="Runs">
      {list.map((run) => (
        <li key={`${run.id}:${run.status}`} class="routine-run" data-run={run.id}>
          <span class={`chip routine-chip-${statusTone(run.status)}`} data-status={run.status}>
            {statusWords(run.status)}
          </span>{' '}
          <span>{new Date((run.startedAt ?? run.createdAt) * 1000).toLocaleString()}</span> <span class="admin-muted">· {triggerWords(run.trigger)}</span>
          {run.reason ? <span class="admin-muted"> · {run.reason}</span> : null}
        </li>
      ))}
    </ol>
  );
}

function RoutineForm(props: { connection: HostConnection; agentId: string; onDone: () => void }) {
  const { connection } = props;
  const [name, setName] = useState('');
  const [message, setMessage] = useState('');
  const [draft, setDraft] = useState<ScheduleDraft>(emptyDraft());
  const [threadPolicy, setThreadPolicy] = useState<'new' | 'continue'>('new');
  const [audience, setAudience] = useState<'creator' | 'team'>('creator');
  const [overlap, setOverlap] = useState<'skip' | 'queue'>('skip');
  const [missed, setMissed] = useState<'once' | 'skip'>('once');
  const [preview, setPreview] = useState<ScheduleView | null>(null);
  const [previewError, setPreviewError] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const schedule = scheduleArgs(draft);
  const scheduleKey = JSON.stringify(schedule);
  useEffect(() => {
    setPreview(null);
    setPreviewError(null);
    if (!schedule) return undefined;
    let current = true;
    const timer = setTimeout(() => {
      connection.call('routines-v1/preview', schedule).then(
        (answer) => current && setPreview(answer),
        (failure: unknown) => current && setPreviewError(failure),
      );
    }, 200);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [connection, scheduleKey]);
  const change = (part: Partial<ScheduleDraft>) => setDraft({ ...draft, ...part });
  const save = (event: Event) => {
    event.preventDefault();
    if (!schedule) return;
    setError(null);
    connection
      .call('routines-v1/create', { agentId: props.agentId, name: name.trim(), message: message.trim(), schedule, threadPolicy, audience, overlap, missed })
      .then(props.onDone, setError);
  };
  const timed = draft.repeat === 'daily' || draft.repeat === 'weekdays' || draft.repeat === 'weekly';
  const zoned = timed || draft.repeat === 'cron';
  return (
    <form class="admin-form routine-form" onSubmit={save} aria-label="New routine">
      <label>
        Name
        <input value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Message that starts each run
        <textarea rows={3} value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
      </label>
      <fieldset class="routine-schedule-builder">
        <legend>Schedule</legend>
        <label>
          Repeat
          <select value={draft.repeat} onChange={(e) => change({ repeat: e.currentTarget.value as Repeat })}>
            <option value="daily">Every day</option>
            <option value="weekdays">Weekdays</option>
            <option value="weekly">One day a week</option>
            <option value="minutes">Every N minutes</option>
            <option value="hours">Every N hours</option>
            <option value="once">Once</option>
            <option value="cron">Cron expression</option>
          </select>
        </label>
        {draft.repeat === 'weekly' ? (
          <label>
            Day
            <select value={String(draft.weekday)} onChange={(e) => change({ weekday: Number(e.currentTarget.value) })}>
              {WEEKDAYS.map((day, index) => (
                <option key={day} value={String(index)}>
                  {day}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {timed ? (
          <label>
            At
            <input type="time" value={draft.time} onInput={(e) => change({ time: e.currentTarget.value })} />
          </label>
        ) : null}
        {draft.repeat === 'minutes' || draft.repeat === 'hours' ? (
          <label>
            Every
            <input type="number" min={1} value={String(draft.every)} onInput={(e) => change({ every: Number(e.currentTarget.value) })} />
          </label>
        ) : null}
        {draft.repeat === 'once' ? (
          <label>
            On
            <input type="datetime-local" value={draft.at} onInput={(e) => change({ at: e.currentTarget.value })} />
          </label>
        ) : null}
        {draft.repeat === 'cron' ? (
          <label>
            Cron (minute hour day month weekday)
            <input value={draft.cron} placeholder="0 9 * * 1-5" onInput={(e) => change({ cron: e.currentTarget.value })} />
          </label>
        ) : null}
        {zoned ? (
          <label>
            Time zone
            <input value={draft.timeZone} placeholder="Europe/London" onInput={(e) => change({ timeZone: e.currentTarget.value })} />
          </label>
        ) : null}
        <div aria-live="polite" class="routine-preview">
          {preview ? <ScheduleWords schedule={preview} /> : null}
          {previewError ? <Banner tone="error">{describeError(previewError)}</Banner> : null}
        </div>
      </fieldset>
      <label>
        Threads
        <select value={threadPolicy} onChange={(e) => setThreadPolicy(e.currentTarget.value as 'new' | 'continue')}>
          <option value="new">A new thread for each run</option>
          <option value="continue">One thread, continued run after run</option>
        </select>
      </label>
      <label>
        Who sees its runs
        <select value={audience} onChange={(e) => setAudience(e.currentTarget.value as 'creator' | 'team')}>
          <option value="creator">Only me</option>
          <option value="team">The team</option>
        </select>
      </label>
      <label>
        While a run is under way
        <select value={overlap} onChange={(e) => setOverlap(e.currentTarget.value as 'skip' | 'queue')}>
          <option value="skip">Skip the next one</option>
          <option value="queue">Let one wait</option>
        </select>
      </label>
      <label>
        After the host was down
        <select value={missed} onChange={(e) => setMissed(e.currentTarget.value as 'once' | 'skip')}>
          <option value="once">Run once for the missed times</option>
          <option value="skip">Skip the missed times</option>
        </select>
      </label>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="admin-inline">
        <button type="submit" class="btn btn-primary btn-sm" disabled={!name.trim() || !message.trim() || !schedule || previewError !== null}>
          Create routine
        </button>
        <button type="button" class="btn btn-ghost btn-sm" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
