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

/** "just now", "5 minutes ago", "tomorrow", "in 7 days"... */
export function formatRelative(epochSeconds: number, nowMs: number = Date.now()): string {
  const diff = epochSeconds - nowMs / 1000;
  const abs = Math.abs(diff);
  if (abs < 45) return 'just now';
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const [unit, seconds]: [Intl.RelativeTimeFormatUnit, number] =
    abs < 45 * 60
      ? ['minute', 60]
      : abs < 22 * 3600
        ? ['hour', 3600]
        : abs < 60 * 86400
          ? ['day', 86400]
          : abs < 365 * 86400
            ? ['month', 30 * 86400]
            : ['year', 365 * 86400];
  return format.format(Math.round(diff / seconds), unit);
}
