// A print the firmware runs from its own SD card: M23/M24 to start, M25 to pause, M24 to resume, M25 + M26 S0 to
// cancel; progress from polled M27 replies (`SD printing byte p/t`) and the end from `Done printing file`.
// Seen from the link it is plain command traffic, so this object keeps the job's own state.
import type { JobOutcome, Printer } from './types.ts';

interface Listener {
  progress?(filepos: number): void;
  stateChanged?(state: string): void;
  finished(outcome: JobOutcome, filepos: number, error?: string): void;
}

const PROGRESS = /SD printing byte (\d+)\/(\d+)/;
/** Consecutive "not printing" replies that mean the print was stopped at the printer (OctoPrint's maxNotSdPrinting). */
const MAX_NOT_PRINTING = 2;

export class SdJob {
  filepos = 0;
  /** File size as the firmware reports it (`SD printing byte p/<size>`), 0 until known. */
  size = 0;
  readonly done: Promise<JobOutcome>;
  private resolveDone!: (o: JobOutcome) => void;
  private phase: 'starting' | 'printing' | 'paused' | 'ended' = 'starting';
  private poll: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private notPrinting = 0;

  constructor(private readonly printer: Printer, private readonly name: string, private readonly listener: Listener,
    private readonly pollSeconds: number) {
    this.done = new Promise((resolve) => { this.resolveDone = resolve; });
  }

  start(): void {
    this.unsubscribe = this.printer.subscribe({
      log: (lines) => { for (const l of lines) if (l.startsWith('Recv: ')) this.onReply(l.slice(6)); },
      state: (s) => { if (s.flags.closedOrError) this.end('error', s.error || 'Printer disconnected'); },
    });
    this.printer.commands([`M23 /${this.name}`, 'M24']);
    this.phase = 'printing';
    this.printer.setSdPrintState?.('PRINTING');
    this.listener.stateChanged?.('PRINTING');
    this.poll = setInterval(() => {
      if (this.phase === 'printing' && this.printer.isOperational()) this.printer.commands(['M27']);
    }, Math.max(200, this.pollSeconds * 1000));
    this.poll.unref();
  }

  private onReply(line: string): void {
    if (this.phase === 'ended') return;
    const m = PROGRESS.exec(line);
    if (m) {
      const pos = Number(m[1]);
      const total = Number(m[2]);
      if (total === 0 && pos === 0) return this.onNotPrinting();
      this.notPrinting = 0;
      this.filepos = pos;
      this.size = total;
      this.listener.progress?.(pos);
    } else if (line.startsWith('Done printing file')) {
      this.end('done');
    } else if (line.startsWith('Not SD printing')) {
      this.onNotPrinting();
    } else if (/^open failed/i.test(line)) {
      this.end('error', line);
    }
  }

  private onNotPrinting(): void {
    if (this.phase !== 'printing') return;
    if (++this.notPrinting > MAX_NOT_PRINTING) this.end('cancelled');
  }

  pause(byFirmware = false): Promise<void> {
    if (this.phase === 'printing') {
      if (!byFirmware) this.printer.commands(['M25']);
      this.phase = 'paused';
      this.printer.setSdPrintState?.('PAUSED');
      this.listener.stateChanged?.('PAUSED');
    }
    return Promise.resolve();
  }

  resume(byFirmware = false): void {
    if (this.phase !== 'paused') return;
    this.notPrinting = 0;
    this.printer.commands(byFirmware ? ['M27'] : ['M24', 'M27']);
    this.phase = 'printing';
    this.printer.setSdPrintState?.('PRINTING');
    this.listener.stateChanged?.('PRINTING');
  }

  cancel(): Promise<JobOutcome> {
    if (this.phase !== 'ended') {
      if (this.printer.isOperational()) this.printer.commands(['M25', 'M26 S0']);
      this.end('cancelled');
    }
    return this.done;
  }

  private end(outcome: JobOutcome, error?: string): void {
    if (this.phase === 'ended') return;
    // The link shows the firmware's own print too (GET /api/printer flags), so clients polling it see it end.
    if (outcome !== 'error') {
      if (this.phase === 'paused') this.printer.setSdPrintState?.('CANCELLING');
      this.printer.setSdPrintState?.('OPERATIONAL');
    }
    this.phase = 'ended';
    if (this.poll) clearInterval(this.poll);
    this.unsubscribe?.();
    try {
      this.listener.finished(outcome, this.filepos, error);
    } finally {
      this.resolveDone(outcome);
    }
  }
}
