/** Routines under an agent: the schedule builder's schedules, the words and next times it shows, run now, and the history's status chips. */
import { act } from 'preact/test-utils';
import { describe, expect, it } from 'vitest';
import { AgentRoutines } from '../src/components/host/AgentRoutines';
import { emptyDraft, scheduleArgs, statusTone, statusWords } from '../src/host/routine-form';
import { button, fakeConnection, mountPoint, show, submit, typeInto } from './host-fakes';

const AGENT = 'a'.repeat(32);
const ME = 'm'.repeat(32);
const SCHEDULE = {
  kind: 'cron',
  cron: '0 9 * * 1-5',
  timeZone: 'Europe/London',
  everySeconds: null,
  at: null,
  words: 'Weekdays at 09:00, Europe/London',
  nextTimes: [1, 2, 3],
  nextTimesLocal: ['Mon 7 Dec 09:00', 'Tue 8 Dec 09:00', 'Wed 9 Dec 09:00'],
};
const ROUTINE = {
  id: 'r'.repeat(32),
  agentId: AGENT,
  createdBy: ME,
  name: 'Orders',
  message: 'Count orders.',
  schedule: SCHEDULE,
  threadPolicy: 'new',
  threadId: null,
  audience: 'creator',
  audienceMembers: [],
  approvers: [],
  approvalSeconds: 86400,
  overlap: 'skip',
  missed: 'once',
  enabled: true,
  nextFireAt: 1,
  createdAt: 0,
  updatedAt: 0,
};
const RUNS = [
  { id: '1'.repeat(32), routineId: ROUTINE.id, trigger: 'manual', status: 'done', reason: null, dueAt: null, createdAt: 10, startedAt: 10, endedAt: 11, startedBy: ME, threadId: 't'.repeat(32) },
  { id: '2'.repeat(32), routineId: ROUTINE.id, trigger: 'schedule', status: 'skipped', reason: 'the previous run was still under way', dueAt: 5, createdAt: 5, startedAt: null, endedAt: 5, startedBy: null, threadId: null },
];

describe('the schedule builder', () => {
  it('turns each choice into the schedule the host takes', () => {
    const draft = emptyDraft('Europe/London');
    expect(scheduleArgs(draft)).toEqual({ kind: 'cron', cron: '0 9 * * 1-5', timeZone: 'Europe/London' });
    expect(scheduleArgs({ ...draft, repeat: 'daily', time: '07:30' })).toEqual({ kind: 'cron', cron: '30 7 * * *', timeZone: 'Europe/London' });
    expect(scheduleArgs({ ...draft, repeat: 'weekly', weekday: 5, time: '18:05' })).toEqual({ kind: 'cron', cron: '5 18 * * 5', timeZone: 'Europe/London' });
    expect(scheduleArgs({ ...draft, repeat: 'minutes', every: 15 })).toEqual({ kind: 'every', everySeconds: 900 });
    expect(scheduleArgs({ ...draft, repeat: 'hours', every: 2 })).toEqual({ kind: 'every', everySeconds: 7200 });
    expect(scheduleArgs({ ...draft, repeat: 'once', at: '' })).toBeNull();
    expect(scheduleArgs({ ...draft, repeat: 'cron', cron: '  ' })).toBeNull();
    expect(scheduleArgs({ ...draft, time: '' })).toBeNull();
  });

  it('reads a run status as a chip', () => {
    expect([statusTone('done'), statusTone('running'), statusTone('queued'), statusTone('skipped'), statusTone('denied'), statusTone('interrupted')]).toEqual(['good', 'busy', 'busy', 'quiet', 'bad', 'bad']);
    expect(statusWords('capped')).toBe('Hit its tool-call cap');
  });
});

describe('an agent’s routines', () => {
  const mount = mountPoint();

  async function open(connection: ReturnType<typeof fakeConnection>['connection']) {
    await show(<AgentRoutines connection={connection} agentId={AGENT} accountId={ME} canManageAll={false} />, mount.element);
    const details = mount.element.querySelector('details')!;
    await act(async () => {
      details.open = true;
      details.dispatchEvent(new Event('toggle'));
    });
    await act(async () => {});
  }

  it('shows each routine in words with its next times, runs it now and shows the runs with chips', async () => {
    const { connection, calls } = fakeConnection({ 'routines-v1/list': { routines: [ROUTINE] }, 'routines-v1/history': { runs: RUNS }, 'routines-v1/run': RUNS[0] });
    await open(connection);
    const row = mount.element.querySelector('[data-routine]')!;
    expect(row.querySelector('.routine-schedule')!.textContent).toBe('Weekdays at 09:00, Europe/London: Mon 7 Dec 09:00, Tue 8 Dec 09:00, Wed 9 Dec 09:00');
    await act(async () => button(row, 'Run now').click());
    await act(async () => {});
    expect(calls).toContainEqual(['routines-v1/run', { routineId: ROUTINE.id }]);
    const chips = [...row.querySelectorAll('.routine-run .chip')].map((chip) => [chip.textContent, chip.getAttribute('data-status'), chip.className]);
    expect(chips).toEqual([
      ['Done', 'done', 'chip routine-chip-good'],
      ['Skipped', 'skipped', 'chip routine-chip-quiet'],
    ]);
    expect(row.textContent).toContain('the previous run was still under way');
  });

  it('offers no changes on a routine another member made', async () => {
    const theirs = { ...ROUTINE, createdBy: 'o'.repeat(32) };
    const { connection } = fakeConnection({ 'routines-v1/list': { routines: [theirs] } });
    await open(connection);
    const row = mount.element.querySelector('[data-routine]')!;
    expect([...row.querySelectorAll('button')].map((b) => b.textContent)).toEqual(['Runs']);
  });

  it('previews the schedule being built and creates the routine', async () => {
    const { connection, calls } = fakeConnection({ 'routines-v1/list': { routines: [] }, 'routines-v1/preview': SCHEDULE, 'routines-v1/create': ROUTINE });
    await open(connection);
    await act(async () => button(mount.element, 'New routine…').click());
    const form = mount.element.querySelector<HTMLFormElement>('form.routine-form')!;
    const [name, zone] = [...form.querySelectorAll<HTMLInputElement>('input')].filter((input) => input.type !== 'time');
    await typeInto(name!, 'Orders');
    await typeInto(form.querySelector('textarea')!, 'Count orders.');
    await typeInto(zone!, 'Europe/London');
    await act(async () => new Promise((resolve) => setTimeout(resolve, 250)));
    await act(async () => {});
    expect(calls).toContainEqual(['routines-v1/preview', { kind: 'cron', cron: '0 9 * * 1-5', timeZone: 'Europe/London' }]);
    expect(form.querySelector('.routine-preview')!.textContent).toBe('Weekdays at 09:00, Europe/London: Mon 7 Dec 09:00, Tue 8 Dec 09:00, Wed 9 Dec 09:00');
    await submit(form);
    await act(async () => {});
    expect(calls).toContainEqual([
      'routines-v1/create',
      { agentId: AGENT, name: 'Orders', message: 'Count orders.', schedule: { kind: 'cron', cron: '0 9 * * 1-5', timeZone: 'Europe/London' }, threadPolicy: 'new', audience: 'creator', overlap: 'skip', missed: 'once' },
    ]);
  });

  it('says what is wrong with a schedule the host refuses, and does not create it', async () => {
    const { connection, calls } = fakeConnection({ 'routines-v1/list': { routines: [] } }, { 'routines-v1/preview': 'invalidSchedule' });
    await open(connection);
    await act(async () => button(mount.element, 'New routine…').click());
    await act(async () => new Promise((resolve) => setTimeout(resolve, 250)));
    await act(async () => {});
    const form = mount.element.querySelector<HTMLFormElement>('form.routine-form')!;
    expect(form.textContent).toContain('That schedule is not valid');
    expect(button(form, 'Create routine').disabled).toBe(true);
    expect(calls.some(([route]) => route === 'routines-v1/create')).toBe(false);
  });
});
