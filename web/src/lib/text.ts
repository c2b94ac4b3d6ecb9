// Text cut in time linear in its length, where the obvious regular expression would not be (the server's src/core/text.ts).

/** `text` without the run of `char` at its end (`/\/+$/` retries a run of slashes inside a path from each of them). */
export function withoutTrailing(text: string, char: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === char) end--;
  return text.slice(0, end);
}
