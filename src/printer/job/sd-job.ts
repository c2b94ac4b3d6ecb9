// A print the firmware runs from its own SD card: M23/M24 to start, M25 (+ M400/M114 for the position) to pause, M24
// to resume, M25 + M26 S0 to cancel; progress from polled M27 replies (`SD printing byte p/t`) and the end from
// `Done printing file`.
// Seen from the link it is plain command traffic; the job's state is the link's one job lifecycle
// (job-lifecycle.ts), handed over by Printer.beginSdJob and moved from here, so the printer's state and its texts
// (`… from SD`) are the driver's moves.
import type { JobOutcome, Printer } from '../types.ts';
import type { JobMoves, JobState } from './job-lifecycle.ts';

interface Listener {
  progress?(filepos: number): void;
  stateChanged?(state: string): void;
  finished(outcome: JobOutcome, filepos: number, error?: string): void;
}

export interface SdJobOptions {
  /** Seconds between M27 polls. */
  pollSeconds: number;
  /** serial.logPositionOnPause: a pause waits for the firmware's position (M400, M114) before it is Paused. */
  logPositionOnPause: boolean;
  /** serial.timeout.positionLogWait in ms: the longest a pause waits for that position. */
  positionLogWaitMs: number;
  /** beforePrintStarted: sent ahead of M23/M24, so the firmware runs it before the file. */
  prologue?: string[];
  /** afterPrintDone: sent with M400 once the firmware says `Done printing file`; the job is done when they are answered. */
  epilogue?: string[];
  /** The longest Finishing waits for the epilogue's answers (ms). */
  finishWaitMs?: number;
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
  /** The link's job lifecycle, said to be an SD print (Printer.beginSdJob: throws while not operational or busy). */
  private readonly lifecycle: JobMoves;
  private ended = false;
  private poll: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private notPrinting = 0;

  constructor(private readonly printer: Printer, private readonly name: string, private readonly listener: Listener,
    private readonly opts: SdJobOptions) {
    this.done = new Promise((resolve) => { this.resolveDone = resolve; });
    this.lifecycle = printer.beginSdJob();
  }

  /** ENDED once finished: the lifecycle may carry the next job by then. */
  get state(): JobState | 'ENDED' { return this.ended ? 'ENDED' : this.lifecycle.state; }

  start(): void {
    const unsubscribe = this.printer.subscribe({
      state: (s) => { if (s.flags.closedOrError) this.end('error', s.error || 'Printer disconnected'); },
    });
    const stopWatching = this.printer.watchReplies((line) => this.onReply(line));
    this.unsubscribe = () => { unsubscribe(); stopWatching(); };
    this.printer.commands([...(this.opts.prologue ?? []), `M23 /${this.name}`, 'M24']);
    this.move('PRINTING');
    this.poll = setInterval(() => {
      if (this.state === 'PRINTING' && this.printer.isOperational()) this.printer.commands(['M27']);
    }, Math.max(200, this.opts.pollSeconds * 1000));
    this.poll.unref();
  }

  private onReply(line: string): void {
    if (this.ended) return;
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
      void this.finish();
    } else if (line.startsWith('Not SD printing')) {
      this.onNotPrinting();
    } else if (/^open failed/i.test(line)) {
      this.end('error', line);
    }
  }

  private onNotPrinting(): void {
    if (this.state !== 'PRINTING') return;
    if (++this.notPrinting > MAX_NOT_PRINTING) this.end('cancelled');
  }

  /** Finishing as for a streamed job: M400 and afterPrintDone, Operational once they are answered. */
  private async finish(): Promise<void> {
    const state = this.state;
    if (this.ended || (state !== 'PRINTING' && state !== 'PAUSING' && state !== 'PAUSED')) return;
    // Done while pausing or paused: the firmware finished anyway (Finishing is reached through Printing).
    if (state !== 'PRINTING') this.move(state === 'PAUSING' ? 'RESUMING' : 'PRINTING');
    this.move('PRINTING');
    if (this.size > 0) this.filepos = this.size;
    this.move('FINISHING');
    if (this.printer.isOperational()) {
      this.printer.commands(['M400', ...(this.opts.epilogue ?? [])]);
      await this.printer.settled(this.opts.finishWaitMs ?? 60_000);
    }
    this.end('done');
  }

  async pause(byFirmware = false): Promise<void> {
    if (this.ended || this.state !== 'PRINTING') return;
    if (!byFirmware) {
      // Pausing first, so the M114 answer is reported as the pause position (PositionUpdate reason "pause").
      this.move('PAUSING');
      this.printer.commands(this.opts.logPositionOnPause ? ['M25', 'M400', 'M114'] : ['M25']);
      await this.printer.settled(this.opts.logPositionOnPause ? this.opts.positionLogWaitMs : 5000);
      // A resume or cancel that came in meanwhile wins.
      if (this.ended || this.lifecycle.state !== 'PAUSING') return;
    }
    this.move('PAUSED');
  }

  resume(byFirmware = false): void {
    const state = this.state;
    if (this.ended || (state !== 'PAUSED' && state !== 'PAUSING')) return;
    this.notPrinting = 0;
    this.printer.commands(byFirmware ? ['M27'] : ['M24', 'M27']);
    // From Pausing through Resuming (the table has no shortcut), from Paused straight back.
    if (state === 'PAUSING') this.move('RESUMING');
    this.move('PRINTING');
  }

  cancel(): Promise<JobOutcome> {
    if (!this.ended) {
      if (this.printer.isOperational()) this.printer.commands(['M25', 'M26 S0']);
      this.end('cancelled');
    }
    return this.done;
  }

  private end(outcome: JobOutcome, error?: string): void {
    if (this.ended) return;
    const state = this.state;
    if (outcome !== 'error' && (state === 'PAUSED' || state === 'PAUSING')) this.move('CANCELLING');
    this.ended = true;
    if (this.poll) clearInterval(this.poll);
    this.unsubscribe?.();
    try {
      // The owner reports the end (PrintDone, PrintCancelled) before the link says Operational, as OctoPrint does.
      this.listener.finished(outcome, this.filepos, error);
    } finally {
      // Only while the lifecycle is still this job's (a link that went down has reset it already). An error with the
      // link up ("open failed") is announced too: the link's state must leave Printing.
      if (this.lifecycle.kind === 'sd') this.lifecycle.end();
      this.resolveDone(outcome);
    }
  }

  /** The owner hears a real move (the link refuses moves while it is not operational). */
  private move(to: Exclude<JobState, 'IDLE'>): void {
    const was = this.lifecycle.state;
    if (this.lifecycle.move(to) && was !== to) this.listener.stateChanged?.(to);
  }
}
