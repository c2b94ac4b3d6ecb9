// What was sent last before a link dropped, and where the file continues given the firmware's own line counter.
import type { LiveJob } from '../printer/job/job-runner.ts';

/**
 * The end of what was sent when the link dropped: `lines` are the last numbered lines (`job`: a file line, not a
 * temperature poll) and `positions[k]` the byte offset after the file line k file lines before the last one written.
 */
export interface LinkTail {
  lines: Array<{ n: number; job: boolean }>;
  positions: Array<number | null>;
}

/** The link's last lines and, for each count of file lines not received, where the file continues. */
export function linkTail(live: LiveJob): LinkTail | null {
  const tail = live.stream.sentTail?.(64);
  if (!tail || tail.lines.length === 0 || !live.stream.positionBack) return null;
  const lines = tail.lines.map(({ n, wire }) => ({ n, job: !/^N\d+ M105\*\d+$/.test(wire) }));
  // Job lines handed to the link but not written yet (pulled ahead, or waiting in the link thread) were never sent.
  const skip = tail.unsent;
  const positions: Array<number | null> = [];
  const jobLines = lines.filter((l) => l.job).length;
  for (let k = 0; k <= jobLines; k++) positions.push(live.stream.positionBack(skip + k));
  return { lines, positions };
}

/**
 * Where the file continues when the firmware's last line is `n`: after the file line before the first file line it did
 * not get. Null when `n` is not among the lines sent last (the printer restarted its count, or the history is short).
 * Temperature polls are told from file lines by their text alone, so an `M105` in the file itself would be taken for
 * a poll (an M105 changes nothing on the printer).
 */
export function offsetAfterLine(tail: LinkTail, n: number): number | null {
  const first = tail.lines[0];
  const last = tail.lines.at(-1);
  if (!first || !last || n > last.n || n < first.n - 1) return null;
  const missing = tail.lines.filter((l) => l.n > n && l.job).length;
  return tail.positions[missing] ?? null;
}
