// Port/baudrate auto-detection: try each candidate with an empty line and the hello until the firmware answers
// with `ok` or `start` (three attempts per candidate), keeping the transport that answered open.
import type { LineTransport, TransportFactory } from './line-transport.ts';
import type { Timers } from './settings.ts';
import { frameLine } from '../gcode/line.ts';

export interface DetectionCandidate {
  port: string;
  baudrate: number;
}

export interface Detected extends DetectionCandidate {
  transport: LineTransport;
}

export interface DetectionOptions {
  helloCommand: string;
  /** Seconds to wait for an answer per attempt. */
  attemptTimeout: number;
  attempts?: number;
  /** Stop early (the user disconnected meanwhile). */
  cancelled?: () => boolean;
  /** Progress for the terminal. */
  log?: (text: string) => void;
}

/** One attempt: resolves true on a line that contains `start` or starts with `ok`, false on timeout or close. */
function attempt(t: LineTransport, timers: Timers, hello: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok: boolean) => {
      if (done) return;
      done = true;
      timers.clearTimeout(timer);
      t.off('line', onLine);
      t.off('close', onClose);
      resolve(ok);
    };
    const onLine = (line: string) => {
      const l = line.trim();
      if (l.startsWith('ok') || l.includes('start')) finish(true);
    };
    const onClose = () => finish(false);
    const timer = timers.setTimeout(() => finish(false), timeoutMs);
    t.on('line', onLine);
    t.on('close', onClose);
    // An empty line flushes whatever garbage the firmware has buffered.
    t.write('').then(() => t.write(hello)).catch(() => finish(false));
  });
}

export async function detectPort(candidates: DetectionCandidate[], create: TransportFactory, timers: Timers, opts: DetectionOptions): Promise<Detected | null> {
  const hello = frameLine(0, opts.helloCommand);
  for (const c of candidates) {
    if (opts.cancelled?.()) return null;
    opts.log?.(`Trying port ${c.port}, baudrate ${c.baudrate}`);
    const t = create(c.port, c.baudrate);
    try {
      await t.open();
    } catch (err) {
      opts.log?.(`Could not open ${c.port}: ${(err as Error).message}`);
      continue;
    }
    for (let i = 0; i < (opts.attempts ?? 3); i++) {
      if (opts.cancelled?.()) break;
      if (await attempt(t, timers, hello, opts.attemptTimeout * 1000)) return { ...c, transport: t };
    }
    await t.close().catch(() => {});
  }
  return null;
}
