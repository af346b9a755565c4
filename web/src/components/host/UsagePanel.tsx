/**
 * The Usage section (`usage-v1`): what the team's model requests used and cost per day,
 * stacked by agent, provider or member, over this month, the last 30 days or a custom
 * range; the summary as a table under the chart ("no price" where the host has none) and
 * as a CSV file. Members see their own use (the host answers them with nothing else);
 * owners and admins see the team's, and edit its budgets (`budgets-v1`) in Budgets.
 */

import { useEffect, useMemo, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import type { Role } from '../../host/protocol';
import { stackDays, type Metric, type UsageRow } from '../../host/usage-chart';
import { dayIn, formatCost, formatTokens, GROUPINGS, keyName, rangeArgs, rangeProblem, rowCost, type Grouping, type Names, type RangeChoice } from '../../host/usage-report';
import { useHostLoad } from '../../host/use-host-call';
import { Banner } from '../Banner';
import { Loading } from '../Loading';
import type { AgentView } from './ChatPanel';
import { BudgetsAdmin } from './BudgetsAdmin';
import { UsageChart } from './UsageChart';

export type UsageView = 'spending' | 'budgets';

export function UsagePanel(props: {
  connection: HostConnection;
  role: Role;
  /** The host serves `budgets-v1`: owners and admins get the Budgets editor. */
  budgetsServed: boolean;
  agents: AgentView[];
  /** Member names by account id (the hub's list). */
  members: ReadonlyMap<string, string>;
  view: UsageView;
  onView: (view: UsageView) => void;
}) {
  const manager = props.role !== 'member';
  const names = useMemo<Names>(() => ({ agents: new Map(props.agents.map((a) => [a.id, a.name] as const)), members: props.members }), [props.agents, props.members]);
  const budgets = manager && props.budgetsServed;
  const view = budgets ? props.view : 'spending';
  return (
    <section class="admin-panel card card-body usage-panel" aria-label="Usage">
      <div class="usage-head">
        <h2>Usage</h2>
        {budgets ? (
          <div class="segmented" role="tablist" aria-label="Usage views">
            {(['spending', 'budgets'] as const).map((name) => (
              <button type="button" role="tab" key={name} class="segment" aria-selected={view === name} onClick={() => props.onView(name)}>
                {name === 'spending' ? 'Spending' : 'Budgets'}
              </button>
            ))}
          </div>
        ) : null}
      </div>
      {view === 'budgets' ? <BudgetsAdmin connection={props.connection} agents={props.agents} members={props.members} /> : <Spending connection={props.connection} manager={manager} names={names} />}
    </section>
  );
}

const RANGES: ReadonlyArray<{ kind: RangeChoice['kind']; name: string }> = [
  { kind: 'month', name: 'This month' },
  { kind: 'last30', name: 'Last 30 days' },
  { kind: 'custom', name: 'Custom' },
];

function Spending({ connection, manager, names }: { connection: HostConnection; manager: boolean; names: Names }) {
  const settings = useHostLoad(connection, 'usage-v1/settings-get', {}, []);
  const [range, setRange] = useState<RangeChoice>({ kind: 'month' });
  const [metric, setMetric] = useState<Metric>('cost');
  const [grouping, setGrouping] = useState<Grouping>('agent');
  if (settings.error) return <Banner tone="error">{describeError(settings.error)}</Banner>;
  if (!settings.data) return <Loading />;
  const today = dayIn(settings.data.timeZone, new Date());
  const asked = rangeArgs(range, today);
  return (
    <>
      <p class="muted">
        {manager ? 'What the team’s agents spent on model requests' : 'What your own chats and routines spent on model requests'}, per day in the team’s time zone ({settings.data.timeZone}).
      </p>
      <div class="usage-controls">
        <label class="admin-field">
          Range
          <select aria-label="Range" value={range.kind} onChange={(e) => setRange(pickRange(e.currentTarget.value as RangeChoice['kind'], range, today))}>
            {RANGES.map((r) => (
              <option key={r.kind} value={r.kind}>
                {r.name}
              </option>
            ))}
          </select>
        </label>
        {range.kind === 'custom' ? (
          <>
            <label class="admin-field">
              From
              <input type="date" aria-label="From" value={range.from} max={today} onInput={(e) => setRange({ ...range, from: e.currentTarget.value })} />
            </label>
            <label class="admin-field">
              To
              <input type="date" aria-label="To" value={range.to} max={today} onInput={(e) => setRange({ ...range, to: e.currentTarget.value })} />
            </label>
          </>
        ) : null}
        <Toggle label="Show" value={metric} choices={[['cost', 'Cost'], ['tokens', 'Tokens']]} onChange={setMetric} />
        <Toggle label="By" value={grouping} choices={GROUPINGS.map((g) => [g.id, g.name] as const)} onChange={setGrouping} />
      </div>
      {range.kind === 'custom' && asked === null ? <p class="field-error">{rangeProblem(range)}</p> : null}
      {asked ? <Report key={`${asked.from}:${asked.to}:${grouping}`} connection={connection} asked={asked} metric={metric} grouping={grouping} names={names} /> : null}
    </>
  );
}

/** The custom range starts as the range shown before it. */
function pickRange(kind: RangeChoice['kind'], old: RangeChoice, today: string): RangeChoice {
  if (kind !== 'custom') return { kind };
  const shown = rangeArgs(old, today);
  return { kind, from: shown?.from ?? today, to: shown?.to ?? today };
}

function Toggle<T extends string>(props: { label: string; value: T; choices: ReadonlyArray<readonly [T, string]>; onChange: (value: T) => void }) {
  return (
    <div class="admin-field">
      <span>{props.label}</span>
      <div class="segmented" role="radiogroup" aria-label={props.label}>
        {props.choices.map(([id, name]) => (
          <button type="button" role="radio" key={id} class="segment" aria-checked={props.value === id} onClick={() => props.onChange(id)}>
            {name}
          </button>
        ))}
      </div>
    </div>
  );
}

function Report(props: { connection: HostConnection; asked: { from?: string; to?: string }; metric: Metric; grouping: Grouping; names: Names }) {
  const { connection, asked, metric, grouping, names } = props;
  const series = useHostLoad(connection, 'usage-v1/series', { ...asked, stackBy: grouping }, []);
  const summary = useHostLoad(connection, 'usage-v1/summary', { ...asked, by: [grouping] }, []);
  const error = series.error ?? summary.error;
  if (error) return <Banner tone="error">{describeError(error)}</Banner>;
  if (!series.data || !summary.data) return <Loading />;
  const currency = summary.data.currency;
  const label = (key: string) => keyName(grouping, key, names);
  const stacks = stackDays(series.data.rows, metric, grouping);
  const shownValue = (value: number) => (metric === 'cost' ? formatCost(String(value), currency) : formatTokens(Math.round(value)));
  const axisValue = (value: number) => (metric === 'cost' ? String(value) : compactTokens(value));
  const rows = [...summary.data.rows].sort((a, b) => b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens));
  const title = `${metric === 'cost' ? `Cost in ${currency}` : 'Tokens'} per day from ${summary.data.from} to ${summary.data.to}, by ${grouping}`;
  return (
    <div class="usage-report" data-from={summary.data.from} data-to={summary.data.to}>
      <UsageChart stacks={stacks} label={label} value={axisValue} title={title} />
      {rows.length === 0 ? (
        <p class="empty">No model requests in this range.</p>
      ) : (
        <UsageTable rows={rows} grouping={grouping} label={label} currency={currency} />
      )}
      {metric === 'cost' ? <p class="admin-muted">Total: {shownValue(stacks.values.flat().reduce((sum, v) => sum + v, 0))}. Requests of a model with no price count no cost.</p> : null}
      <CsvExport connection={connection} asked={asked} grouping={grouping} />
    </div>
  );
}

function compactTokens(value: number): string {
  if (value >= 1_000_000) return `${Number((value / 1_000_000).toPrecision(3))}M`;
  if (value >= 1_000) return `${Number((value / 1_000).toPrecision(3))}k`;
  return String(value);
}

const GROUP_TITLE: Record<Grouping, string> = { agent: 'Agent', provider: 'Provider', member: 'Member' };

function UsageTable(props: { rows: UsageRow[]; grouping: Grouping; label: (key: string) => string; currency: string }) {
  const { rows, grouping, label, currency } = props;
  const heads = [GROUP_TITLE[grouping], 'Requests', 'Input tokens', 'Output tokens', 'Cost'];
  return (
    <table class="usage-table">
      <thead>
        <tr>
          {heads.map((head) => (
            <th key={head} scope="col">
              {head}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const key = row.key[grouping] ?? '';
          return (
            <tr key={key} data-key={key}>
              <th scope="row" data-label={heads[0]}>
                {label(key)}
              </th>
              <td data-label={heads[1]}>{formatTokens(row.requests)}</td>
              <td data-label={heads[2]}>{formatTokens(row.inputTokens)}</td>
              <td data-label={heads[3]}>{formatTokens(row.outputTokens)}</td>
              <td data-label={heads[4]} class={row.cost === null ? 'usage-no-price' : undefined}>
                {rowCost(row, currency)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The summary as a CSV file the browser saves (the host quotes cells that look like formulas). */
function CsvExport(props: { connection: HostConnection; asked: { from?: string; to?: string }; grouping: Grouping }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [link, setLink] = useState<{ url: string; filename: string } | null>(null);
  useEffect(() => () => (link ? URL.revokeObjectURL(link.url) : undefined), [link]);
  const exportCsv = async () => {
    setBusy(true);
    setError(null);
    try {
      const answer = await props.connection.call('usage-v1/csv', { ...props.asked, by: [props.grouping] });
      const url = URL.createObjectURL(new Blob([answer.csv], { type: 'text/csv' }));
      setLink({ url, filename: answer.filename });
      const anchor = document.createElement('a');
      anchor.href = url;
      anchor.download = answer.filename;
      anchor.click();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="admin-inline">
      <button type="button" class="btn btn-secondary btn-sm" disabled={busy} onClick={() => void exportCsv()}>
        Export CSV
      </button>
      {link ? (
        <a class="admin-muted" href={link.url} download={link.filename}>
          {link.filename}
        </a>
      ) : null}
      {error ? <Banner tone="error">{describeError(error)}</Banner> : null}
    </div>
  );
}
