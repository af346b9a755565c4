/** The Budgets editor's form: the problems shown before sending, the body sent, an edited budget's start. */
import { describe, expect, it } from 'vitest';
import { budgetBody, budgetLine, budgetProblems, formOf, meterPercent, NEW_BUDGET, type BudgetView } from '../src/host/budget-form';

const AGENT = 'a'.repeat(32);

describe('budget form', () => {
  it('asks for a name, a target, the days of a custom period and an amount', () => {
    expect(budgetProblems(NEW_BUDGET)).toEqual({ name: 'Name the budget.', amount: 'Enter an amount in US dollars above 0, like 25 or 12.50.' });
    expect(budgetProblems({ ...NEW_BUDGET, name: 'x', scope: 'agent', amount: '5' })).toEqual({ targetId: 'Choose the agent it is for.' });
    expect(budgetProblems({ ...NEW_BUDGET, name: 'x', period: 'custom', firstDay: '2026-12-10', lastDay: '2026-12-01', amount: '5' })).toEqual({
      firstDay: 'The first day comes after the last.',
    });
    expect(budgetProblems({ ...NEW_BUDGET, name: 'x', period: 'custom', firstDay: '2026-12-10', amount: '5' })).toEqual({ firstDay: 'Choose the first and the last day.' });
  });

  it('takes dollars with up to six places and whole tokens, above 0', () => {
    const named = { ...NEW_BUDGET, name: 'Spend' };
    expect(budgetProblems({ ...named, amount: '12.50' })).toEqual({});
    expect(budgetProblems({ ...named, amount: '$1,000' })).toEqual({});
    expect(budgetProblems({ ...named, amount: '0' }).amount).toMatch(/above 0/);
    expect(budgetProblems({ ...named, amount: '-3' }).amount).toMatch(/above 0/);
    expect(budgetProblems({ ...named, amount: '1.1234567' }).amount).toMatch(/US dollars/);
    expect(budgetProblems({ ...named, amount: '2000000000' }).amount).toMatch(/at most/);
    expect(budgetProblems({ ...named, unit: 'tokens', amount: '1000' })).toEqual({});
    expect(budgetProblems({ ...named, unit: 'tokens', amount: '10.5' }).amount).toBe('Enter a whole number of tokens above 0.');
  });

  it('sends only what the scope and period take', () => {
    expect(budgetBody(NEW_BUDGET)).toBeNull();
    expect(budgetBody({ ...NEW_BUDGET, name: ' Team spend ', amount: ' $25 ', targetId: AGENT })).toEqual({ name: 'Team spend', scope: 'team', period: 'month', unit: 'cost', amount: '25' });
    expect(budgetBody({ ...NEW_BUDGET, name: 'Scout', scope: 'agent', targetId: AGENT, period: 'custom', firstDay: '2026-12-01', lastDay: '2026-12-31', unit: 'tokens', amount: '1,000' })).toEqual({
      name: 'Scout',
      scope: 'agent',
      targetId: AGENT,
      period: 'custom',
      firstDay: '2026-12-01',
      lastDay: '2026-12-31',
      unit: 'tokens',
      amount: '1000',
    });
  });

  const budget: BudgetView = {
    id: 'b'.repeat(32),
    name: 'Scout',
    scope: 'agent',
    targetId: AGENT,
    period: 'month',
    firstDay: '2026-12-01',
    lastDay: '2026-12-31',
    unit: 'cost',
    amount: '25.000000',
    used: '30.500000',
    percent: 122,
  };

  it('starts an edit from the budget, and words its use', () => {
    expect(formOf(budget)).toEqual({ name: 'Scout', scope: 'agent', targetId: AGENT, period: 'month', firstDay: '', lastDay: '', unit: 'cost', amount: '25' });
    expect(budgetBody(formOf(budget))).toMatchObject({ amount: '25', targetId: AGENT });
    expect(budgetLine(budget)).toBe('$30.50 of $25.00 used, this month (from 2026-12-01)');
    expect(meterPercent(budget)).toBe(100);
    const tokens = { ...budget, unit: 'tokens', amount: '1000', used: '250', period: 'custom', percent: 25 };
    expect(budgetLine(tokens)).toBe('250 tokens of 1,000 tokens used, 2026-12-01 to 2026-12-31');
    expect(formOf(tokens)).toMatchObject({ period: 'custom', firstDay: '2026-12-01', lastDay: '2026-12-31', amount: '1000' });
  });
});
