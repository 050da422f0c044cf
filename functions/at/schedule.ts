// Parses an At's spec.schedule: RFC 3339 in UTC ("Z"), as the seed's layout "2006-01-02T15:04:05Z",
// optionally with fractions of a second. Offsets other than Z are refused so "UTC" stays true.

const RFC3339_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;

/** Milliseconds since the epoch, or undefined when `schedule` is not a real RFC 3339 UTC time. */
export function parseSchedule(schedule: unknown): number | undefined {
  if (typeof schedule !== 'string') return undefined;
  const match = RFC3339_UTC.exec(schedule);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const fraction = match[7] ? Math.floor(Number(match[7]) * 1000) : 0;
  const millis = Date.UTC(year, month - 1, day, hour, minute, second, fraction);
  // Date.UTC rolls 2020-02-30 over to March: a different date back means the fields were out of range.
  const back = new Date(millis);
  const same =
    back.getUTCFullYear() === year &&
    back.getUTCMonth() === month - 1 &&
    back.getUTCDate() === day &&
    back.getUTCHours() === hour &&
    back.getUTCMinutes() === minute &&
    back.getUTCSeconds() === second;
  return same ? millis : undefined;
}

/** Whole seconds from `now` until `at`, rounded up so a requeue never fires early; at least 1. */
export function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
