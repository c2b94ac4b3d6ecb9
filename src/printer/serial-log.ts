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

  /** `deliver` gets the new lines at most every `batchMs` (the push channel's terminal). */
  constructor(capacity: number, private readonly deliver: (lines: string[]) => void, private readonly batchMs = 100) {
    this.ring = new Array<string>(Math.max(1, capacity)).fill('');
    this.dirs = new Uint8Array(Math.max(1, capacity));
  }

  /** Opens or closes logs/serial.log following the setting. */
  setFileLogging(enabled: boolean, logsDir: string): void {
    if (enabled && !this.file) {
      this.file = createWriteStream(join(logsDir, 'serial.log'), { flags: 'a' });
      this.file.on('error', () => { this.file = null; });
    } else if (!enabled && this.file) {
      this.file.end();
      this.file = null;
    }
  }

  sent(wire: string): void { this.add(wire, 0); }
  received(line: string): void { this.add(line, 1); }
  info(text: string): void { this.add(text, 2); }

  private add(text: string, dir: number): void {
    // Only a reference is stored on the hot path; the prefix is added when somebody reads the lines.
    const cap = this.ring.length;
    const i = (this.head + this.size) % cap;
    this.ring[i] = text;
    this.dirs[i] = dir;
    if (this.size < cap) this.size++;
    else this.head = (this.head + 1) % cap;
    if (this.file || this.pending.length < 500) this.pending.push(dir === 0 ? `Send: ${text}` : dir === 1 ? `Recv: ${text}` : text);
    if (this.flushTimer === null) {
      this.flushTimer = setTimeout(() => this.flush(), this.batchMs);
      this.flushTimer.unref();
    }
  }

  private flush(): void {
    this.flushTimer = null;
    const lines = this.pending;
    this.pending = [];
    if (lines.length === 0) return;
    if (this.file) {
      const stamp = new Date().toISOString();
      this.file.write(lines.map((l) => `${stamp} - ${l}\n`).join(''));
    }
    this.deliver(lines.length > 300 ? lines.slice(lines.length - 300) : lines);
  }

  lines(): string[] {
    const cap = this.ring.length;
    const out: string[] = [];
    for (let k = 0; k < this.size; k++) {
      const i = (this.head + k) % cap;
      const d = this.dirs[i];
      out.push(d === 0 ? `Send: ${this.ring[i]}` : d === 1 ? `Recv: ${this.ring[i]}` : this.ring[i]);
    }
    return out;
  }

  close(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flush();
    this.file?.end();
    this.file = null;
  }
}
