// The serial dialogue as the terminal shows it (`Send: ...`/`Recv: ...`): a small ring for the UI, batched push
// delivery, and logs/serial.log when serial.log is on.
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';

export class SerialLog {
  private readonly ring: string[];
  private readonly dirs: Uint8Array;
  private head = 0;
  private size = 0;
  private pending: string[] = [];
  private flushTimer: NodeJS.Timeout | null = null;
  private file: WriteStream | null = null;

  /**
   * `deliver` gets the new lines at most every `batchMs` (the push channel's terminal), and among them the received
   * ones without their `Recv: ` prefix (the firmware's raw lines). `fileFailed` hears of a serial.log that cannot be
   * written (disk full): its lines are dropped, and it is opened again FILE_RETRY_MS later.
   */
  constructor(
    capacity: number,
    private readonly deliver: (lines: string[], received: string[]) => void,
    private readonly batchMs = 100,
    private readonly fileFailed: (err: Error) => void = () => undefined,
    /** For the wait before reopening the file: a jump of the wall clock must not keep it shut. */
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    this.ring = new Array<string>(Math.max(1, capacity)).fill('');
    this.dirs = new Uint8Array(Math.max(1, capacity));
  }

  /** Opens or closes logs/serial.log following the setting. */
  setFileLogging(enabled: boolean, logsDir: string): void {
    this.fileDir = enabled ? logsDir : null;
    this.fileRetryAt = 0;
    if (enabled && !this.file) this.openFile(logsDir);
    else if (!enabled && this.file) {
      this.file.end();
      this.file = null;
    }
  }

  /** Where serial.log goes while the setting is on; after a write error (disk full) it is opened again later. */
  private fileDir: string | null = null;
  private fileRetryAt = -Infinity;

  private openFile(logsDir: string): void {
    const file = createWriteStream(join(logsDir, 'serial.log'), { flags: 'a' });
    file.on('error', (err) => {
      if (this.file !== file) return;
      this.file = null;
      this.fileRetryAt = this.monotonic() + FILE_RETRY_MS;
      this.fileFailed(err);
    });
    this.file = file;
  }

  sent(wire: string): void { this.add(wire, 0); }
  received(line: string): void {
    this.add(line, 1);
    // Kept apart from the ring: a burst of sent lines must not push the firmware's own lines out of a batch.
    this.receivedPending.push(line);
    if (this.receivedPending.length > 4 * MAX_BATCH) this.receivedPending.splice(0, this.receivedPending.length - MAX_BATCH);
  }
  info(text: string): void { this.add(text, 2); }

  private add(text: string, dir: number): void {
    // Only a reference is stored on the hot path; prefixes are added when the lines are read or flushed.
    const cap = this.ring.length;
    const i = (this.head + this.size) % cap;
    this.ring[i] = text;
    this.dirs[i] = dir;
    if (this.size < cap) this.size++;
    else this.head = (this.head + 1) % cap;
    this.unflushed++;
    if (!this.file && this.fileDir !== null && this.monotonic() >= this.fileRetryAt) this.openFile(this.fileDir);
    if (this.file) this.pending.push(format(text, dir));
    if (this.flushTimer === null) {
      this.flushTimer = setTimeout(() => this.flush(), this.batchMs);
      this.flushTimer.unref();
    }
  }

  private unflushed = 0;
  private receivedPending: string[] = [];

  private flush(): void {
    this.flushTimer = null;
    if (this.file && this.pending.length > 0) {
      const stamp = new Date().toISOString();
      this.file.write(this.pending.map((l) => `${stamp} - ${l}\n`).join(''));
    }
    this.pending = [];
    // The terminal gets the newest lines of the batch (at most what the ring holds).
    const n = Math.min(this.unflushed, this.size, MAX_BATCH);
    this.unflushed = 0;
    const r = this.receivedPending;
    this.receivedPending = [];
    if (n > 0) this.deliver(this.newest(n), r.length > MAX_BATCH ? r.slice(-MAX_BATCH) : r);
  }

  private newest(n: number): string[] {
    const cap = this.ring.length;
    const out: string[] = [];
    for (let k = this.size - n; k < this.size; k++) {
      const i = (this.head + k) % cap;
      out.push(format(this.ring[i], this.dirs[i]));
    }
    return out;
  }

  lines(): string[] {
    return this.newest(this.size);
  }

  close(): void {
    this.fileDir = null;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flush();
    this.file?.end();
    this.file = null;
  }
}

/** Lines handed on per batch, of each kind: the newest when more arrived (what a terminal and `history` show). */
const MAX_BATCH = 300;
/** After serial.log failed to take a write (disk full), how long before it is opened again. */
const FILE_RETRY_MS = 10_000;

const format = (text: string, dir: number): string => (dir === 0 ? `Send: ${text}` : dir === 1 ? `Recv: ${text}` : text);
