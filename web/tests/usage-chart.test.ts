/** The Usage screen's numbers: days stacked by a key, round ticks, where bars go, the range asked for and the words of a row. */
import { describe, expect, it } from 'vitest';
import { CHART_SIZE, layoutChart, niceTicks, stackDays, valueOf, type UsageRow } from '../src/host/usage-chart';
import { addDays, dayIn, formatCost, keyName, rangeArgs, rangeProblem, rowCost } from '../src/host/usage-report';

const SCOUT = 'a'.repeat(32);
const PRICER = 'b'.repeat(32);

function row(key: Record<string, string>, fields: Partial<UsageRow> = {}): UsageRow {
  return {
    key,
    requests: 1,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: null,
    cost: null,
    unpricedRequests: 0,
    ...fields,
  };
}

const EMPTY_DAY = (day: string) => row({ day, agent: '' }, { requests: 0 });

describe('stacks', () => {
  const rows = [
    row({ day: '2026-12-01', agent: SCOUT }, { cost: '0.5000', inputTokens: 100, outputTokens: 20 }),
    row({ day: '2026-12-01', agent: PRICER }, { cost: '1.2500', inputTokens: 10, outputTokens: 5 }),
    EMPTY_DAY('2026-12-02'),
    row({ day: '2026-12-03', agent: SCOUT }, { cost: null, unpricedRequests: 1, inputTokens: 40, outputTokens: 2 }),
  ];

  it('keeps every day, and orders the keys by their total, largest first', () => {
    const cost = stackDays(rows, 'cost', 'agent');
    expect(cost.days).toEqual(['2026-12-01', '2026-12-02', '2026-12-03']);
    expect(cost.keys).toEqual([PRICER, SCOUT]);
    expect(cost.values).toEqual([
      [1.25, 0.5],
      [0, 0],
      [0, 0],
    ]);
    const tokens = stackDays(rows, 'tokens', 'agent');
    expect(tokens.keys).toEqual([SCOUT, PRICER]);
    expect(tokens.values).toEqual([
      [120, 15],
      [0, 0],
      [42, 0],
    ]);
  });

  it('counts a request with no price as no cost, never a guess', () => {
    expect(valueOf(rows[3]!, 'cost')).toBe(0);
    expect(valueOf(rows[3]!, 'tokens')).toBe(42);
    // The series' filler of an empty day is no key.
    expect(stackDays([EMPTY_DAY('2026-12-02')], 'tokens', 'agent')).toEqual({ days: ['2026-12-02'], keys: [], values: [[]] });
  });
});

describe('ticks', () => {
  it('are round steps from 0 past the largest value', () => {
    expect(niceTicks(1.75)).toEqual([0, 0.5, 1, 1.5, 2]);
    expect(niceTicks(100)).toEqual([0, 25, 50, 75, 100]);
    expect(niceTicks(12_345)).toEqual([0, 5000, 10_000, 15_000]);
    expect(niceTicks(0.3)).toEqual([0, 0.1, 0.2, 0.3]);
  });

  it('give an empty range a scale of one', () => {
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(Number.NaN)).toEqual([0, 1]);
  });
});

describe('layout', () => {
  const stacks = { days: ['2026-12-01', '2026-12-02'], keys: ['x', 'y'], values: [[1, 1], [0.5, 0]] };

  it('stacks the segments up from the baseline, to the scale of the top tick', () => {
    const layout = layoutChart(stacks);
    const plot = layout.baseline - layout.top;
    const [first, second] = layout.bars;
    expect(layout.ticks.at(-1)).toEqual({ value: 2, y: layout.top });
    expect(first!.segments.map((s) => [s.key, s.height])).toEqual([
      ['x', plot / 2],
      ['y', plot / 2],
    ]);
    expect(first!.segments[0]!.y + first!.segments[0]!.height).toBe(layout.baseline);
    expect(first!.segments[1]!.y).toBe(layout.top);
    // A key with nothing that day draws nothing.
    expect(second!.segments.map((s) => s.key)).toEqual(['x']);
    expect(second!.x - first!.x).toBe(CHART_SIZE.barWidth + CHART_SIZE.gap);
  });

  it('is a phone’s width for a short range, and wider (scrolled) for a long one', () => {
    expect(layoutChart(stacks).width).toBe(CHART_SIZE.minWidth);
    const days = Array.from({ length: 90 }, (_, i) => addDays('2026-10-01', i));
    const long = layoutChart({ days, keys: [], values: days.map(() => []) });
    expect(long.width).toBeGreaterThan(90 * CHART_SIZE.barWidth);
    expect(long.bars.at(-1)!.x + CHART_SIZE.barWidth).toBeLessThanOrEqual(long.width);
    // Not every day is labelled: labels would touch.
    const labelled = long.bars.filter((b) => b.labelled);
    expect(labelled.length).toBeLessThan(90);
    expect(labelled[1]!.x - labelled[0]!.x).toBeGreaterThanOrEqual(40);
  });
});

describe('ranges', () => {
  it('are this month, the last 30 days, or a custom range of at most 400 days', () => {
    expect(rangeArgs({ kind: 'month' }, '2026-03-14')).toEqual({ from: '2026-03-01', to: '2026-03-14' });
    expect(rangeArgs({ kind: 'last30' }, '2026-03-14')).toEqual({ from: '2026-02-13', to: '2026-03-14' });
    expect(rangeArgs({ kind: 'custom', from: '2026-01-01', to: '2026-01-31' }, '2026-03-14')).toEqual({ from: '2026-01-01', to: '2026-01-31' });
    expect(rangeArgs({ kind: 'custom', from: '2026-02-01', to: '2026-01-31' }, '2026-03-14')).toBeNull();
    expect(rangeProblem({ from: '', to: '2026-01-31' })).toBe('Choose the first and the last day.');
    expect(rangeProblem({ from: '2025-01-01', to: '2026-02-05' })).toBe('Choose at most 400 days.');
    expect(rangeProblem({ from: '2025-01-01', to: '2026-02-04' })).toBeNull();
  });

  it('count days in the team’s time zone', () => {
    const moment = new Date('2026-11-01T03:30:00Z');
    expect(dayIn('UTC', moment)).toBe('2026-11-01');
    expect(dayIn('America/New_York', moment)).toBe('2026-10-31');
    expect(dayIn('Not/A_Zone', moment)).toBe('2026-11-01');
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
  });
});

describe('words', () => {
  const names = { agents: new Map([[SCOUT, 'Scout']]), members: new Map([['m'.repeat(32), 'Maya']]) };

  it('says "no price" for a row without one, and how many requests had none', () => {
    expect(formatCost(null, 'USD')).toBe('no price');
    expect(formatCost('12.3456', 'EUR')).toBe('12.35 EUR');
    expect(formatCost('0.0042', 'USD')).toBe('0.0042 USD');
    expect(rowCost(row({}, { cost: null, unpricedRequests: 3 }), 'USD')).toBe('no price');
    expect(rowCost(row({}, { cost: '1.0000', unpricedRequests: 2 }), 'USD')).toBe('1.00 USD (+ 2 requests with no price)');
  });

  it('names agents and members, and says what has no name', () => {
    expect(keyName('agent', SCOUT, names)).toBe('Scout');
    expect(keyName('agent', PRICER, names)).toBe('A deleted agent');
    expect(keyName('member', 'm'.repeat(32), names)).toBe('Maya');
    expect(keyName('member', '', names)).toBe('Routines (no member)');
    expect(keyName('provider', 'anthropic', names)).toBe('anthropic');
  });
});
