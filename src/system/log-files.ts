// Log files: the reopenable stream the logger writes to, and listing/reading/deleting files of the logs folder without leaving it.
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import { readdir, lstat, unlink, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { invalid, notFound } from '../core/errors.ts';

export const CURRENT_LOG = 'gantry.log';

/**
 * The logger's file destination. Deleting the current log through the API unlinks the file under an open descriptor;
 * `reopen()` switches to a freshly created file so later lines land in a visible gantry.log again.
 */
export class ReopenableLogStream {
  private current: RotatingFileStream;
  private ended = false;

  constructor(readonly dir: string, readonly name = CURRENT_LOG) {
    this.current = this.open();
  }

  private open(): RotatingFileStream {
    return createStream(this.name, { path: this.dir, size: '10M', maxFiles: 5 });
  }

  write(chunk: string): boolean {
    // A line logged after the server stopped (a late timer, a closing socket) is dropped, not a write-after-end error.
    if (this.ended) return true;
    return this.current.write(chunk);
  }

  reopen(): void {
    const old = this.current;
    this.current = this.open();
    old.end();
  }

  end(): void {
    this.ended = true;
    this.current.end();
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
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const st = await lstat(join(this.dir, name)).catch(() => undefined);
      if (!st?.isFile()) continue;
      files.push({ name, size: st.size, date: Math.floor(st.mtimeMs / 1000) });
    }
    files.sort((a, b) => a.name.localeCompare(b.name));
    return { files, free: await this.free() };
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
    await unlink(path);
    if (name === this.stream?.name) this.stream.reopen();
  }
}

/** One path segment, no separators of any platform, no dot names, no control characters. */
export function isBareName(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  return name.length > 0 && name.length <= 255 && name !== '.' && name !== '..' && !/[/\\\u0000-\u001f]/.test(name);
}
