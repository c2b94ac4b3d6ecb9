// Where the console copy of the log goes: readable lines (pino-pretty) for a person at a terminal or reading the journal, JSON lines otherwise.
import { fstatSync } from 'node:fs';
import type { DestinationStream } from 'pino';

/**
 * The log file keeps JSON whatever this returns. A terminal gets colours; systemd's journal (JOURNAL_STREAM names
 * stdout's device:inode) gets the same lines without colours, as it adds its own timestamps. A pipe or a file keeps
 * JSON so tools can read it. pino-pretty runs in this thread (sync), not as a transport worker: the console
 * sees a few lines a minute at info, not worth a thread's memory; it is loaded only when used.
 */
export async function consoleLogStream(out: NodeJS.WriteStream = process.stdout): Promise<DestinationStream> {
  // A console that goes away (the reader of a pipe exits, as `gantry serve | head` does; a terminal hangs up) must not
  // take the server down with an unhandled write error: its errors (EPIPE, EIO) are dropped, the log file keeps every
  // line, and the stream, destroyed by the error, takes no more writes (the CLI's own lines included).
  if (!out.listeners('error').includes(dropConsoleError)) out.on('error', dropConsoleError);
  const journal = toJournal(out);
  if (!out.isTTY && !journal) return out;
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    destination: out,
    sync: true,
    colorize: Boolean(out.isTTY),
    translateTime: journal ? false : 'SYS:HH:MM:ss.l',
    ignore: journal ? 'pid,hostname,time' : 'pid,hostname',
  });
}

function dropConsoleError(): void {}

function toJournal(out: NodeJS.WriteStream): boolean {
  const stream = process.env.JOURNAL_STREAM;
  const fd = (out as { fd?: number }).fd;
  if (!stream || fd === undefined) return false;
  try {
    const s = fstatSync(fd);
    return stream === `${s.dev}:${s.ino}`;
  } catch {
    return false;
  }
}
