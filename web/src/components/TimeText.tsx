/** A moment as a person reads it, in a `<time>` element that carries the exact instant. */
export function TimeText({ at, text }: { at: number; text: string }) {
  return <time dateTime={new Date(at * 1000).toISOString()}>{text}</time>;
}
