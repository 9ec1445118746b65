/** Status timestamps carry a numeric UTC offset (spec 2.1): `2026-11-22T10:20:30+00:00`. */
export function statusTimestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}+00:00`;
}
