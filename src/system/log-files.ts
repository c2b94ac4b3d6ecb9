// Log files: the reopenable stream the logger writes to, and listing/reading/deleting files of the logs folder without leaving it.
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import { mkdir, readdir, lstat, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { removeFile } from '../core/atomic-file.ts';
import { invalid, notFound } from '../core/errors.ts';

export const CURRENT_LOG = 'gantry.log';

/** How long lines are dropped after the log file failed before it is opened again. */
export const LOG_RETRY_MS = 10_000;
/** How often, at most, a write looks whether the log file is still there. */
export const LOG_PRESENCE_CHECK_MS = 30_000;

/**
 * The logger's file destination. Deleting the current log through the API unlinks the file under an open descriptor;
 * `reopen()` switches to a freshly created file so later lines land in a visible gantry.log again.
 *
 * A file that cannot be written (disk full, a failing SD card) must not take the server down with it: the stream's
 * error is caught, lines are dropped and counted, the trouble is said once on stderr (the console or the journal),
 * and the file is opened again LOG_RETRY_MS later; the first line that lands says how many were lost.
 */
export class ReopenableLogStream {
  private current: RotatingFileStream | null;
  private ended = false;
  /** Since when the file cannot be written and how many lines were dropped; null while it can. */
  private trouble: { since: number; retryAt: number; code: string; dropped: number } | null = null;
  /** Between the stream's rotation and the new file's opening, the file is missing by design. */
  private rotating = false;
  private checkedAt: number;

  constructor(
    readonly dir: string,
    readonly name = CURRENT_LOG,
    private readonly warn: (text: string) => void = (text) => { process.stderr.write(`${text}\n`); },
    private readonly now: () => number = Date.now,
    /** For the retry wait: a jump of the wall clock must not hold the log shut for the jump's length. */
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    this.current = this.open();
    this.checkedAt = this.monotonic();
  }

  private open(): RotatingFileStream {
    const stream = createStream(this.name, { path: this.dir, size: '10M', maxFiles: 5 });
    stream.on('error', (err: NodeJS.ErrnoException) => this.failed(stream, err));
    stream.on('rotation', () => { this.rotating = true; });
    stream.on('open', () => { this.rotating = false; });
    return stream;
  }

  /**
   * A log file removed by hand (`rm`, a clean-up of the folder) would take every later line with it, unseen: a write
   * looks for it now and then and opens a new one. Lines of the moments between are lost. Writes, not a timer, so
   * that an idle server does not wake up for it.
   */
  private checkPresence(): void {
    if (this.rotating || !this.current || this.monotonic() - this.checkedAt < LOG_PRESENCE_CHECK_MS) return;
    this.checkedAt = this.monotonic();
    const stream = this.current;
    stat(join(this.dir, this.name)).catch((err: NodeJS.ErrnoException) => {
      // The stream makes the folder again too, if that went.
      if (err.code === 'ENOENT' && !this.rotating && !this.ended && stream === this.current) this.reopen();
    });
  }

  private failed(stream: RotatingFileStream, err: NodeJS.ErrnoException): void {
    // A stream already replaced (reopen, or an earlier failure) may still report; only the current one counts.
    if (stream !== this.current) return;
    this.current = null;
    stream.destroy();
    const retryAt = this.monotonic() + LOG_RETRY_MS;
    if (this.trouble) {
      this.trouble.retryAt = retryAt;
      return;
    }
    this.trouble = { since: this.now(), retryAt, code: err.code ?? err.message, dropped: 0 };
    this.warn(`gantry: the log file ${this.dir}/${this.name} cannot be written (${err.message}); log lines are dropped until it can, tried again every ${LOG_RETRY_MS / 1000} s`);
  }

  write(chunk: string): boolean {
    // A line logged after the server stopped (a late timer, a closing socket) is dropped, not a write-after-end error.
    if (this.ended) return true;
    if (!this.current) {
      const trouble = this.trouble!;
      if (this.monotonic() < trouble.retryAt) {
        trouble.dropped++;
        return true;
      }
      this.current = this.open();
      const note = JSON.stringify({ level: 40, time: this.now(), svc: 'logs', dropped: trouble.dropped, since: trouble.since, code: trouble.code,
        msg: `${trouble.dropped} log line(s) were dropped: the log file could not be written (${trouble.code})` });
      const stream = this.current;
      stream.write(`${note}\n`, (err) => {
        if (!err && this.current === stream && this.trouble === trouble) {
          this.trouble = null;
          this.warn(`gantry: the log file ${this.dir}/${this.name} is written again`);
        }
      });
    }
    this.checkPresence();
    return this.current.write(chunk);
  }

  reopen(): void {
    const old = this.current;
    this.current = this.open();
    old?.end();
  }

  end(): void {
    this.ended = true;
    this.current?.end();
  }
}

export interface LogFileInfo {
  name: string;
  size: number;
  /** Last modification, Unix seconds. */
  date: number;
}

export class LogFiles {
  constructor(readonly dir: string, private readonly stream?: ReopenableLogStream) {}

  async list(): Promise<{ files: LogFileInfo[]; free: number }> {
    const files: LogFileInfo[] = [];
    for (const name of await this.names()) {
      const st = await lstat(join(this.dir, name)).catch(() => undefined);
      if (!st?.isFile()) continue;
      files.push({ name, size: st.size, date: Math.floor(st.mtimeMs / 1000) });
    }
    files.sort((a, b) => a.name.localeCompare(b.name));
    return { files, free: await this.free() };
  }

  /**
   * The folder's entries. A folder removed behind the server's back (a clean-up by hand) is made again, and the log
   * reopened in it: the listing answered 500 and the log went on into the removed file, where nobody could read it.
   */
  private async names(): Promise<string[]> {
    try {
      return await readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return [];
      await mkdir(this.dir, { recursive: true });
      this.stream?.reopen();
      return readdir(this.dir).catch(() => []);
    }
  }

  async free(): Promise<number> {
    const st = await statfs(this.dir);
    return st.bavail * st.bsize;
  }

  /** Absolute path of a log file by its bare name; anything that is not a plain file directly in the folder is refused. */
  async resolve(name: string): Promise<string> {
    if (!isBareName(name)) throw invalid(`Invalid log file name: ${name}`);
    const path = join(this.dir, name);
    const st = await lstat(path).catch(() => undefined);
    if (!st?.isFile()) throw notFound(`No such log file: ${name}`);
    return path;
  }

  async delete(name: string): Promise<void> {
    const path = await this.resolve(name);
    await removeFile(path);
    if (name === this.stream?.name) this.stream.reopen();
  }
}

/** One path segment, no separators of any platform, no dot names, no control characters. */
export function isBareName(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  return name.length > 0 && name.length <= 255 && name !== '.' && name !== '..' && !/[/\\\u0000-\u001f]/.test(name);
}
