/** Showing the hub's times (epoch seconds, as floats) to people. */

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: 'medium',
  timeStyle: 'short',
});

export function formatDate(epochSeconds: number): string {
  return dateFormat.format(new Date(epochSeconds * 1000));
}

export function formatDateTime(epochSeconds: number): string {
  return dateTimeFormat.format(new Date(epochSeconds * 1000));
}

/** "just now", "5 minutes ago", "in 3 days"... */
export function formatRelative(epochSeconds: number, nowMs: number = Date.now()): string {
  const diff = epochSeconds - nowMs / 1000;
  const abs = Math.abs(diff);
  if (abs < 45) return 'just now';
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ['minute', 60],
    ['hour', 3600],
    ['day', 86400],
    ['month', 30 * 86400],
    ['year', 365 * 86400],
  ];
  let chosen: [Intl.RelativeTimeFormatUnit, number] = units[0]!;
  for (const unit of units) if (abs >= unit[1] * 0.9) chosen = unit;
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  return format.format(Math.round(diff / chosen[1]), chosen[0]);
}
