/**
 * The team's budgets (`budgets-v1`, owners and admins): each with what its current period
 * used, as words and a meter; add one for the team, an agent, a member or a routine, per
 * month (in the team's time zone) or a custom range of days, in US dollars or tokens;
 * edit one (raising a spent budget lets turns start again) or delete it.
 */

import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import { budgetBody, budgetLine, budgetProblems, formOf, meterPercent, NEW_BUDGET, SCOPES, type BudgetForm, type BudgetProblems, type BudgetView, type Scope } from '../../host/budget-form';
import type { HostConnection } from '../../host/connection';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { ConfirmButton } from '../ConfirmButton';
import { Loading } from '../Loading';
import type { AgentView } from './ChatPanel';

interface Targets {
  agents: ReadonlyArray<{ id: string; name: string }>;
  members: ReadonlyArray<{ id: string; name: string }>;
  routines: ReadonlyArray<{ id: string; name: string }>;
}

export function BudgetsAdmin(props: { connection: HostConnection; agents: AgentView[]; members: ReadonlyMap<string, string> }) {
  const { connection } = props;
  const list = useHostLoad(connection, 'budgets-v1/list', {}, []);
  const routines = useRoutines(connection, props.agents);
  const targets: Targets = {
    agents: props.agents.map((a) => ({ id: a.id, name: a.name })),
    members: [...props.members].map(([id, name]) => ({ id, name })),
    routines,
  };
  if (list.error) return <Banner tone="error">{describeError(list.error)}</Banner>;
  if (!list.data) return <Loading />;
  return (
    <div class="budgets" aria-label="Budgets" role="region">
      <p class="muted">
        At 80 % of a budget the owners, admins and the member concerned are told; at 100 % new turns and routine runs are refused, and a running turn stops after its current model
        request. Costs count in US dollars.
      </p>
      {list.data.budgets.length === 0 ? <p class="empty">No budgets yet.</p> : null}
      <ul class="admin-list" aria-label="Budgets">
        {list.data.budgets.map((budget) => (
          <BudgetRow key={budget.id} connection={connection} budget={budget} targets={targets} onChanged={list.reload} />
        ))}
      </ul>
      <BudgetFields
        label="Add a budget"
        submitText="Add budget"
        start={NEW_BUDGET}
        targets={targets}
        onSubmit={async (body) => {
          await connection.call('budgets-v1/create', body);
          list.reload();
        }}
      />
    </div>
  );
}

/** The routines of every agent, for a routine's budget (each agent's list asked once). */
function useRoutines(connection: HostConnection, agents: AgentView[]): Targets['routines'] {
  const [routines, setRoutines] = useState<Targets['routines']>([]);
  const ids = agents.map((a) => a.id).join();
  useEffect(() => {
    let live = true;
    Promise.all(agents.map((agent) => connection.call('routines-v1/list', { agentId: agent.id }).then((answer) => answer.routines.map((r) => ({ id: r.id, name: `${r.name} (${agent.name})` })))))
      .then((lists) => live && setRoutines(lists.flat()))
      // A host without routines has none to budget.
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [connection, ids]);
  return routines;
}

function targetName(budget: BudgetView, targets: Targets): string {
  if (budget.scope === 'team') return 'The whole team';
  const id = budget.targetId ?? '';
  const list = budget.scope === 'agent' ? targets.agents : budget.scope === 'member' ? targets.members : targets.routines;
  const found = list.find((t) => t.id === id)?.name;
  return found ? `${budget.scope === 'agent' ? 'Agent' : budget.scope === 'member' ? 'Member' : 'Routine'} ${found}` : `A ${budget.scope} no longer here`;
}

function BudgetRow(props: { connection: HostConnection; budget: BudgetView; targets: Targets; onChanged: () => void }) {
  const { connection, budget, onChanged } = props;
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const percent = meterPercent(budget);
  const tone = budget.percent >= 100 ? 'spent' : budget.percent >= 80 ? 'near' : 'ok';
  return (
    <li class="admin-row budget-row" data-budget={budget.id} data-percent={budget.percent}>
      <div class="admin-row-head">
        <strong>{budget.name}</strong>
        <span class="admin-muted">{targetName(budget, props.targets)}</span>
        <span class={`chip budget-${tone}`}>{budget.percent} %</span>
      </div>
      <div class="budget-meter" role="meter" aria-label={`${budget.name} used`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
        <span class={`budget-meter-fill budget-${tone}`} style={{ width: `${percent}%` }} />
      </div>
      <p class="admin-muted">{budgetLine(budget)}</p>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="admin-inline">
        <button type="button" class="btn btn-secondary btn-sm" aria-expanded={editing} onClick={() => setEditing(!editing)}>
          Edit
        </button>
        <ConfirmButton
          label="Delete"
          question={`Delete the budget “${budget.name}”? Turns it stopped may start again.`}
          confirmLabel="Delete"
          tone="secondary"
          size="sm"
          onConfirm={async () => {
            setError(null);
            try {
              await connection.call('budgets-v1/delete', { id: budget.id });
              onChanged();
            } catch (failure) {
              setError(failure);
            }
          }}
        />
      </div>
      {editing ? (
        <BudgetFields
          label={`Edit ${budget.name}`}
          submitText="Save"
          start={formOf(budget)}
          targets={props.targets}
          onCancel={() => setEditing(false)}
          onSubmit={async (body) => {
            await connection.call('budgets-v1/update', { ...body, id: budget.id });
            setEditing(false);
            onChanged();
          }}
        />
      ) : null}
    </li>
  );
}

function BudgetFields(props: {
  label: string;
  submitText: string;
  start: BudgetForm;
  targets: Targets;
  onSubmit: (body: NonNullable<ReturnType<typeof budgetBody>>) => Promise<void>;
  onCancel?: () => void;
}) {
  const { start, targets, onCancel } = props;
  const [form, setForm] = useState<BudgetForm>(start);
  const [shown, setShown] = useState<BudgetProblems>({});
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (change: Partial<BudgetForm>) => {
    setForm((old) => ({ ...old, ...change }));
    setShown({});
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const body = budgetBody(form);
    if (!body) {
      setShown(budgetProblems(form));
      return;
    }
    setBusy(true);
    try {
      await props.onSubmit(body);
      setForm(start);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const choices = form.scope === 'agent' ? targets.agents : form.scope === 'member' ? targets.members : form.scope === 'routine' ? targets.routines : [];
  const id = props.label.replace(/\W+/g, '-').toLowerCase();
  return (
    <form class="admin-form budget-form" aria-label={props.label} onSubmit={(event) => void submit(event)} noValidate>
      {onCancel ? null : <h3>{props.label}</h3>}
      <label>
        Name
        <input type="text" aria-label="Name" value={form.name} maxLength={100} placeholder="Monthly spend" onInput={(e) => set({ name: e.currentTarget.value })} aria-describedby={`${id}-name`} />
        <Problem id={`${id}-name`} text={shown.name} />
      </label>
      <label>
        For
        <select aria-label="For" value={form.scope} onChange={(e) => set({ scope: e.currentTarget.value as Scope, targetId: '' })}>
          {SCOPES.map((scope) => (
            <option key={scope.id} value={scope.id}>
              {scope.name}
            </option>
          ))}
        </select>
      </label>
      {form.scope !== 'team' ? (
        <label>
          Which {form.scope}
          <select aria-label={`Which ${form.scope}`} value={form.targetId} onChange={(e) => set({ targetId: e.currentTarget.value })} aria-describedby={`${id}-target`}>
            <option value="">Choose…</option>
            {choices.map((choice) => (
              <option key={choice.id} value={choice.id}>
                {choice.name}
              </option>
            ))}
          </select>
          <Problem id={`${id}-target`} text={shown.targetId} />
        </label>
      ) : null}
      <label>
        Period
        <select aria-label="Period" value={form.period} onChange={(e) => set({ period: e.currentTarget.value === 'custom' ? 'custom' : 'month' })}>
          <option value="month">Every calendar month</option>
          <option value="custom">From one day to another</option>
        </select>
      </label>
      {form.period === 'custom' ? (
        <div class="budget-days">
          <label>
            First day
            <input type="date" aria-label="First day" value={form.firstDay} onInput={(e) => set({ firstDay: e.currentTarget.value })} aria-describedby={`${id}-days`} />
          </label>
          <label>
            Last day
            <input type="date" aria-label="Last day" value={form.lastDay} onInput={(e) => set({ lastDay: e.currentTarget.value })} />
          </label>
          <Problem id={`${id}-days`} text={shown.firstDay} />
        </div>
      ) : null}
      <label>
        Counted in
        <select aria-label="Counted in" value={form.unit} onChange={(e) => set({ unit: e.currentTarget.value === 'tokens' ? 'tokens' : 'cost' })}>
          <option value="cost">US dollars</option>
          <option value="tokens">Tokens</option>
        </select>
      </label>
      <label>
        Amount
        <input
          type="text"
          inputMode={form.unit === 'cost' ? 'decimal' : 'numeric'}
          aria-label="Amount"
          value={form.amount}
          placeholder={form.unit === 'cost' ? '25.00' : '1000000'}
          onInput={(e) => set({ amount: e.currentTarget.value })}
          aria-describedby={`${id}-amount`}
        />
        <Problem id={`${id}-amount`} text={shown.amount} />
      </label>
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
      <div class="admin-inline">
        <button type="submit" class="btn btn-primary btn-sm" disabled={busy}>
          {props.submitText}
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

function Problem({ id, text }: { id: string; text: string | undefined }) {
  return (
    <span id={id} class="field-error" role={text ? 'alert' : undefined}>
      {text ?? ''}
    </span>
  );
}
