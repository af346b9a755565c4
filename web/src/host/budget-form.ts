/**
 * The Budgets editor's form as values: what a person picks (who the budget is for, the
 * period, US dollars or tokens, the amount), the problems to fix before it is sent, the
 * body `budgets-v1/create` and `budgets-v1/update` take, and a budget's words in the list.
 */

import type { RouteArgs, RouteResult } from './protocol';

export type BudgetView = RouteResult<'budgets-v1/list'>['budgets'][number];
export type BudgetBody = RouteArgs<'budgets-v1/create'>;
export type Scope = BudgetBody['scope'];
export type Unit = BudgetBody['unit'];
export type Period = NonNullable<BudgetBody['period']>;

export const SCOPES: ReadonlyArray<{ id: Scope; name: string }> = [
  { id: 'team', name: 'The whole team' },
  { id: 'agent', name: 'An agent' },
  { id: 'member', name: 'A member' },
  { id: 'routine', name: 'A routine' },
];

export interface BudgetForm {
  name: string;
  scope: Scope;
  targetId: string;
  period: Period;
  firstDay: string;
  lastDay: string;
  unit: Unit;
  amount: string;
}

export type BudgetField = 'name' | 'targetId' | 'firstDay' | 'amount';
export type BudgetProblems = Partial<Record<BudgetField, string>>;

export const NEW_BUDGET: BudgetForm = { name: '', scope: 'team', targetId: '', period: 'month', firstDay: '', lastDay: '', unit: 'cost', amount: '' };

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DOLLARS = /^\d+(\.\d{1,6})?$/;
const WHOLE = /^\d+$/;
const MAX_DOLLARS = 1_000_000_000;
const MAX_TOKENS = 10 ** 15;

/** The form that edits `budget`. */
export function formOf(budget: BudgetView): BudgetForm {
  return {
    name: budget.name,
    scope: budget.scope as Scope,
    targetId: budget.targetId ?? '',
    period: budget.period === 'custom' ? 'custom' : 'month',
    firstDay: budget.period === 'custom' ? budget.firstDay : '',
    lastDay: budget.period === 'custom' ? budget.lastDay : '',
    unit: budget.unit === 'tokens' ? 'tokens' : 'cost',
    // "25.000000" reads 25 in its input.
    amount: budget.unit === 'cost' ? String(Number(budget.amount)) : budget.amount,
  };
}

/** What to fix before the form is sent, by field (the same rules as the host's). */
export function budgetProblems(form: BudgetForm): BudgetProblems {
  const problems: BudgetProblems = {};
  const name = form.name.trim();
  if (!name) problems.name = 'Name the budget.';
  else if (name.length > 100) problems.name = 'Use at most 100 characters.';
  if (form.scope !== 'team' && !form.targetId) {
    problems.targetId = `Choose the ${form.scope} it is for.`;
  }
  if (form.period === 'custom') {
    if (!DAY.test(form.firstDay) || !DAY.test(form.lastDay)) problems.firstDay = 'Choose the first and the last day.';
    else if (form.firstDay > form.lastDay) problems.firstDay = 'The first day comes after the last.';
  }
  const amount = form.amount.trim().replace(/^\$/, '').replaceAll(',', '');
  if (form.unit === 'cost') {
    if (!DOLLARS.test(amount) || Number(amount) <= 0) problems.amount = 'Enter an amount in US dollars above 0, like 25 or 12.50.';
    else if (Number(amount) > MAX_DOLLARS) problems.amount = 'Enter at most 1,000,000,000 US dollars.';
  } else if (!WHOLE.test(amount) || Number(amount) <= 0) {
    problems.amount = 'Enter a whole number of tokens above 0.';
  } else if (Number(amount) > MAX_TOKENS) {
    problems.amount = 'Enter at most 10^15 tokens.';
  }
  return problems;
}

/** The body the form sends; null while it has a problem. */
export function budgetBody(form: BudgetForm): BudgetBody | null {
  if (Object.keys(budgetProblems(form)).length) return null;
  const body: BudgetBody = {
    name: form.name.trim(),
    scope: form.scope,
    period: form.period,
    unit: form.unit,
    amount: form.amount.trim().replace(/^\$/, '').replaceAll(',', ''),
  };
  if (form.scope !== 'team') body.targetId = form.targetId;
  if (form.period === 'custom') {
    body.firstDay = form.firstDay;
    body.lastDay = form.lastDay;
  }
  return body;
}

/** An amount of a budget's unit in words: "$25.00" or "1,000 tokens". */
export function amountWords(unit: string, amount: string): string {
  const value = Number(amount);
  if (!Number.isFinite(value)) return amount;
  if (unit === 'cost') return `$${value.toFixed(value !== 0 && value < 0.01 ? 4 : 2)}`;
  return `${value.toLocaleString('en-US')} tokens`;
}

/** A budget's line in the list: what it used of how much, in which period. */
export function budgetLine(budget: BudgetView): string {
  const period = budget.period === 'custom' ? `${budget.firstDay} to ${budget.lastDay}` : `this month (from ${budget.firstDay})`;
  return `${amountWords(budget.unit, budget.used)} of ${amountWords(budget.unit, budget.amount)} used, ${period}`;
}

/** How full a budget's meter shows: 0 to 100. */
export function meterPercent(budget: BudgetView): number {
  return Math.max(0, Math.min(100, budget.percent));
}
