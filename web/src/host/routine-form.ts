/**
 * The routine form's schedule builder: what a person picks (every day, weekdays, one day
 * a week, every N minutes or hours, once, or a cron expression of their own) as the
 * `schedule` the host takes, and how a run's status reads as a chip.
 */

import type { RouteArgs } from './protocol';

export type ScheduleArgs = RouteArgs<'routines-v1/preview'>;

export type Repeat = 'daily' | 'weekdays' | 'weekly' | 'minutes' | 'hours' | 'once' | 'cron';

export interface ScheduleDraft {
  repeat: Repeat;
  /** "HH:MM" for daily, weekdays and weekly; the day and time for once ("YYYY-MM-DDTHH:MM"). */
  time: string;
  /** 0 Sunday … 6 Saturday, for weekly. */
  weekday: number;
  /** How many minutes or hours. */
  every: number;
  cron: string;
  timeZone: string;
  /** The "once" day and time as the browser's local time. */
  at: string;
}

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function emptyDraft(timeZone = browserZone()): ScheduleDraft {
  return { repeat: 'weekdays', time: '09:00', weekday: 1, every: 30, cron: '0 9 * * 1-5', timeZone, at: '' };
}

/** The `schedule` a draft stands for; null while a needed field is empty. */
export function scheduleArgs(draft: ScheduleDraft): ScheduleArgs | null {
  const [hour, minute] = draft.time.split(':').map((part) => Number.parseInt(part, 10));
  const clock = hour !== undefined && minute !== undefined && !Number.isNaN(hour) && !Number.isNaN(minute) ? `${minute} ${hour}` : null;
  switch (draft.repeat) {
    case 'daily':
      return clock ? { kind: 'cron', cron: `${clock} * * *`, timeZone: draft.timeZone } : null;
    case 'weekdays':
      return clock ? { kind: 'cron', cron: `${clock} * * 1-5`, timeZone: draft.timeZone } : null;
    case 'weekly':
      return clock ? { kind: 'cron', cron: `${clock} * * ${draft.weekday}`, timeZone: draft.timeZone } : null;
    case 'minutes':
      return { kind: 'every', everySeconds: Math.round(draft.every * 60) };
    case 'hours':
      return { kind: 'every', everySeconds: Math.round(draft.every * 3600) };
    case 'once': {
      const at = Date.parse(draft.at);
      return Number.isNaN(at) ? null : { kind: 'once', at: at / 1000 };
    }
    case 'cron':
      return draft.cron.trim() ? { kind: 'cron', cron: draft.cron.trim(), timeZone: draft.timeZone } : null;
  }
}

export type ChipTone = 'good' | 'bad' | 'busy' | 'quiet';

/** How a run's status shows: done is good; running and queued are busy; skipped is quiet. */
export function statusTone(status: string): ChipTone {
  if (status === 'done') return 'good';
  if (status === 'running' || status === 'queued') return 'busy';
  if (status === 'skipped') return 'quiet';
  return 'bad';
}

const STATUS_WORDS: Record<string, string> = {
  done: 'Done',
  error: 'Failed',
  capped: 'Hit its tool-call cap',
  denied: 'Denied',
  stopped: 'Stopped',
  budget: 'Over budget',
  skipped: 'Skipped',
  interrupted: 'Interrupted',
  running: 'Running',
  queued: 'Waiting',
};

export function statusWords(status: string): string {
  return STATUS_WORDS[status] ?? status;
}

const TRIGGER_WORDS: Record<string, string> = { schedule: 'On schedule', manual: 'Run by hand', webhook: 'From a webhook' };

export function triggerWords(trigger: string): string {
  return TRIGGER_WORDS[trigger] ?? trigger;
}
