// Host streaming, one of the two drivers of the job lifecycle: feeds a file's lines through the engine with
// pause/resume/cancel, byte progress, tool-change scripts and injected lines (timelapse), and the position behind the
// lines in flight (recovery).
import type { ConnectionStateId } from '../printer-state.ts';
import type { JobFeed } from '../../protocol/engine.ts';
import type { EngineLink } from '../link/engine-link.ts';
import type { ObjectSkipPlan } from '../link/link-messages.ts';

/**
 * What the streamer drives: a link (in this thread or its own), or a bare ProtocolEngine in tests. A link thread
 * also runs the job's object filter where its engine takes the lines (skipObjects, cancelObject).
 */
export type StreamLink = Pick<EngineLink, 'enqueue' | 'marker' | 'setFeed' | 'setJobActive' | 'pump' | 'plannedTool' | 'linesInFlight' | 'isOperational'>
  & { readonly unsentLines?: number; skipObjects?(plan: ObjectSkipPlan | null): void; cancelObject?(id: number): void };
import { JobLineCursor, type JobLineSource } from './job-line-cursor.ts';
import type { JobLifecycle, JobState } from './job-lifecycle.ts';
import type { ToolChangeLines } from '../link/printer-line-rules.ts';

/** Lines a LineInjector puts before a file line (a timelapse parking the head at a layer change). */
export interface LineInsertion {
  before: string[];
  /**
   * Index in `before` where streaming waits: once every earlier line is acknowledged (put an M400 just before it to
   * wait for the moves too), `hold()` runs, and the next line goes out when it settles. The caller bounds its time.
   */
  holdAt?: number;
  hold?: () => Promise<void>;
}

/**
 * Each file line goes through it first when set (cancel-object, src/objects): the lines to send in its place, `[]`
 * to drop it, or `[line]` (the same string) to keep it. Progress still moves by the file line's bytes. With `inLink`,
 * a link that filters in its thread (StreamLink.skipObjects) runs the filter there instead.
 */
export type JobLineFilter = ((line: string, end: number) => readonly string[]) & {
  readonly inLink?: LinkLineFilter;
  /** The byte spans of the file the filter leaves out (cancelled objects): progress and time left count them out. */
  readonly skipped?: () => readonly (readonly [number, number])[];
};

/**
 * The same filter run by the link where its engine takes the lines (a link thread holds up to STREAM_HIGH lines
 * ahead, and a cancel must act on those too): the streamer hands the link the plan and routes the cancels to it.
 */
export interface LinkLineFilter {
  /** What the link's filter starts with; asked once, as the job starts. */
  plan(): ObjectSkipPlan;
  /** Every file line while the link filters: what the main thread follows (the object being streamed), nothing dropped. */
  observe(line: string, end: number): void;
  /** Where cancels go from the job's start (the link), and null once it ended. */
  route(cancel: ((id: number) => void) | null): void;
}

/** Asked with each file line (not tool-change lines, not its own lines): lines to send before it, or null. */
export type LineInjector = (line: string) => LineInsertion | null;
export type JobOutcome = 'done' | 'cancelled' | 'error';

export interface JobStreamListener {
  /** After each batch of lines was handed to the firmware; `filepos` in bytes. */
  progress?(filepos: number): void;
  stateChanged?(state: ConnectionStateId): void;
  /** Exactly once; after it the state is Operational (done/cancelled) or an error state. */
  finished(outcome: JobOutcome, filepos: number, error?: string): void;
}

export interface JobStreamOptions {
  prologue?: string[];
  epilogue?: string[];
  onCancel?: string[];
  onPaused?: string[];
  onResume?: string[];
  /** Record the position with M400 + M114 before Paused (serial.logPositionOnPause). */
  logPositionOnPause?: boolean;
  abortHeatupOnCancel?: boolean;
  /**
   * Asked once the firmware acknowledged the prologue: a reason ends the job with `error` before its first line is
   * sent (the SD card refused the file M28 asked it to open, so the lines would be executed instead of written).
   */
  refusedStart?: () => string | undefined;
  /**
   * The lines are written to the SD card (M28 … M29), not executed: the end goes straight from the last line to the
   * epilogue (no Finishing, no M400) and a cancel sends no M108, since the firmware would store either in the file.
   */
  transfer?: boolean;
  /** Asked for every file line when set (one branch per line when not); never used for transfers. */
  injector?: LineInjector | null;
  /** Every file line goes through it when set, before the tool-change and injector checks; never for transfers. */
  lineFilter?: JobLineFilter | null;
}

/** What the streamer needs besides the engine: the lifecycle it drives and the tool-change scripts. */
export interface JobStreamContext {
  lifecycle: JobLifecycle;
  /** The tool-change lines around a file line that is a `T<n>` changing `plannedTool`; null otherwise. */
  toolChange?: (line: string, plannedTool: number) => ToolChangeLines | null;
  /** A host word met in the file (EngineSettings.hostWords). */
  hostWord?: (cmd: string) => void;
}

type Phase = JobState | 'ENDED';

export class JobStreamer implements JobFeed {
  filepos = 0;
  /** The line next() returned last is the file's own (JobFeed.fileLine). */
  fileLine = true;
  private lastSentFilepos = 0;
  private ended = false;
  /** A transfer's end: no Finishing state (the lines are stored, not run), but no more feeding either. */
  private transferEnding = false;
  private readonly lines: JobLineCursor;
  /**
   * A tool change being fed: the beforeToolChange lines, the file's T line, the afterToolChange lines. They go before
   * the file's next line, and only the T line moves filepos (to `insertedEnd`), so progress stays in file bytes.
   */
  private inserted: string[] | null = null;
  private insertedIdx = 0;
  private insertedAt = 0;
  private insertedEnd = 0;
  /** An injected wait (LineInsertion.holdAt) at this index of `inserted`; `holding` while its hold runs. */
  private holdAt = -1;
  private hold: (() => Promise<void>) | null = null;
  private holding = false;
  private readonly injector: LineInjector | null;
  private readonly lineFilter: JobLineFilter | null;
  /** The link runs the object filter (see LinkLineFilter); the main thread only observes the lines. */
  private readonly linkFilter: LinkLineFilter | null;
  private pauseWaiters: Array<() => void> = [];
  private resolveDone!: (o: JobOutcome) => void;
  readonly done: Promise<JobOutcome>;

  private readonly lifecycle: JobLifecycle;
  private readonly toolChange: JobStreamContext['toolChange'];
  private readonly hostWord: JobStreamContext['hostWord'];

  constructor(
    private readonly engine: StreamLink,
    source: JobLineSource,
    private readonly listener: JobStreamListener,
    private readonly opts: JobStreamOptions,
    ctx: JobStreamContext,
  ) {
    this.lifecycle = ctx.lifecycle;
    this.toolChange = ctx.toolChange;
    this.hostWord = ctx.hostWord;
    this.lines = new JobLineCursor(source, {
      batchEnded: () => this.listener.progress?.(this.sentFilepos),
      arrived: () => { if (this.phase === 'PRINTING') this.engine.pump(); },
      failed: (err) => this.abort(`Reading the job file failed: ${err.message}`),
    });
    this.injector = opts.transfer ? null : (opts.injector ?? null);
    const filter = opts.transfer ? null : (opts.lineFilter ?? null);
    const inLink = filter?.inLink;
    this.linkFilter = inLink !== undefined && engine.skipObjects !== undefined && engine.cancelObject !== undefined ? inLink : null;
    this.lineFilter = this.linkFilter === null ? filter : null;
    this.done = new Promise((resolve) => { this.resolveDone = resolve; });
  }

  /** Where the job is in the lifecycle; ENDED once finished (the lifecycle may carry the next job by then). */
  get state(): Phase { return this.phase; }
  get active(): boolean { return !this.ended; }

  private get phase(): Phase {
    return this.ended ? 'ENDED' : this.transferEnding ? 'FINISHING' : this.lifecycle.state;
  }

  start(): void {
    this.engine.setJobActive(true);
    const lf = this.linkFilter;
    if (lf !== null) {
      this.engine.skipObjects!(lf.plan());
      lf.route((id) => { if (!this.ended) this.engine.cancelObject!(id); });
    }
    this.move('STARTING');
    this.lines.prefetch();
    this.engine.enqueue('M110 N0');
    for (const l of this.opts.prologue ?? []) this.engine.enqueue(l);
    // The job has started: Printing once this turn's start events are out (OctoPrint's order: Starting, PrintStarted,
    // Upload, Printing), not after whatever was queued before it has run (Cura reads /api/job right after the upload).
    // Its lines still follow those commands and its own start ones: the feed opens at the marker.
    setImmediate(() => { if (this.phase === 'STARTING') this.move('PRINTING'); });
    this.engine.marker(() => {
      if (this.phase !== 'STARTING' && this.phase !== 'PRINTING') return;
      const refused = this.opts.refusedStart?.();
      if (refused !== undefined) return this.end('error', refused);
      if (this.phase === 'STARTING') this.move('PRINTING');
      this.engine.setFeed(this);
    });
  }

  next(): string | null {
    if (this.phase !== 'PRINTING') return null;
    if (this.inserted !== null) return this.nextInserted(this.inserted);
    let line = this.lines.next();
    while (line !== null && this.lineFilter !== null) {
      const out = this.lineFilter(line, this.lines.end);
      if (out.length === 1 && out[0] === line) break;
      if (out.length > 0) {
        this.inserted = out.slice();
        this.insertedIdx = 0;
        this.insertedAt = 0;
        this.insertedEnd = this.lines.end;
        return this.nextInserted(this.inserted);
      }
      // Dropped: its bytes count as done.
      this.filepos = this.lines.end;
      line = this.lines.next();
    }
    if (line !== null && this.linkFilter !== null) this.linkFilter.observe(line, this.lines.end);
    this.fileLine = true;
    if (line === null) {
      // The end comes once the link has written every line it was handed (a link thread holds some ahead).
      if (this.lines.atEnd && !this.engine.unsentLines) this.finish();
      return null;
    }
    const end = this.lines.end;
    // One character code keeps the tool-change test off every line that cannot be one (T, t, or indented).
    const c0 = line.charCodeAt(0);
    if ((c0 === 84 || c0 === 116 || c0 === 32 || c0 === 9) && this.aroundToolChange(line, end)) return this.nextInserted(this.inserted!);
    if (this.injector !== null && this.inject(this.injector, line, end)) return this.nextInserted(this.inserted!);
    this.filepos = end;
    return line;
  }

  /**
   * Byte offset just after the file line `back` command lines before the last one handed to the engine (blank and
   * comment-only lines are not sent, so they are not counted). Asked now and then by the recovery journal, never per
   * line. Null when the lines that far back are no longer held (then the caller keeps its previous value).
   */
  positionBack(back: number): number | null {
    return this.lines.positionBack(back, this.filepos);
  }

  /**
   * The byte offset after the last file line written to the wire: `filepos` less the lines a link thread holds ahead
   * of the wire (the API's progress, a pause position). Walks back over those lines, so it is asked now and then.
   */
  get sentFilepos(): number {
    const unsent = this.engine.unsentLines ?? 0;
    if (unsent === 0) return this.filepos;
    const at = this.positionBack(unsent);
    if (at !== null) this.lastSentFilepos = Math.max(this.lastSentFilepos, at);
    return this.lastSentFilepos;
  }

  /** Lines the firmware has not acknowledged yet (job lines and anything else in the send window). */
  get linesInFlight(): number { return this.engine.linesInFlight; }

  private aroundToolChange(line: string, end: number): boolean {
    const around = this.toolChange?.(line, this.engine.plannedTool()) ?? null;
    if (around === null) return false;
    this.inserted = [...around.before, line, ...around.after];
    this.insertedIdx = 0;
    this.insertedAt = around.before.length;
    this.insertedEnd = end;
    return true;
  }

  private inject(injector: LineInjector, line: string, end: number): boolean {
    let ins: LineInsertion | null;
    try {
      ins = injector(line);
    } catch {
      ins = null;
    }
    if (ins === null || ins.before.length === 0) return false;
    this.inserted = [...ins.before, line];
    this.insertedIdx = 0;
    this.insertedAt = ins.before.length;
    this.insertedEnd = end;
    if (ins.hold !== undefined && ins.holdAt !== undefined && ins.holdAt >= 0 && ins.holdAt <= ins.before.length) {
      this.holdAt = ins.holdAt;
      this.hold = ins.hold;
    }
    return true;
  }

  /** At an injected hold: queue it behind the lines in flight and send nothing until it settles. */
  private holdHere(): boolean {
    const hold = this.hold;
    if (hold !== null) {
      this.hold = null;
      this.holding = true;
      this.engine.marker(() => {
        const release = () => {
          this.holding = false;
          this.holdAt = -1;
          if (this.phase === 'PRINTING') this.engine.pump();
        };
        hold().then(release, release);
      });
    }
    return this.holding;
  }

  private nextInserted(lines: string[]): string | null {
    if (this.insertedIdx === this.holdAt && this.holdHere()) return null;
    const k = this.insertedIdx++;
    this.fileLine = k === this.insertedAt;
    if (k === this.insertedAt) this.filepos = this.insertedEnd;
    if (this.insertedIdx === lines.length) this.inserted = null;
    return lines[k];
  }

  hostCommand(cmd: string): void {
    // A host word of the file (SET_ACTIVE_SPOOL …): the printer service answers it, at its place in the stream.
    if (cmd.charCodeAt(0) !== 64 /* @ */) { this.hostWord?.(cmd); return; }
    const name = cmd.slice(1).split(/\s+/)[0].toLowerCase();
    if (name === 'pause') void this.pause();
    else if (name === 'resume') this.resume();
    else if (name === 'cancel' || name === 'abort') void this.cancel();
  }

  pausingCommand(): void {
    void this.pause();
  }

  pause(): Promise<void> {
    const phase = this.phase;
    if (phase === 'PAUSED' || phase === 'ENDED') return Promise.resolve();
    const p = new Promise<void>((resolve) => this.pauseWaiters.push(resolve));
    if (phase === 'PAUSING') return p;
    if (phase !== 'PRINTING' && phase !== 'STARTING' && phase !== 'RESUMING') {
      this.releasePauseWaiters();
      return p;
    }
    this.engine.setFeed(null);
    this.move('PAUSING');
    if (this.opts.logPositionOnPause ?? true) {
      this.engine.enqueue('M400');
      this.engine.enqueue('M114');
    }
    for (const l of this.opts.onPaused ?? []) this.engine.enqueue(l);
    this.engine.marker(() => {
      if (this.phase !== 'PAUSING') return;
      this.move('PAUSED');
      this.releasePauseWaiters();
    });
    return p;
  }

  /** The firmware paused by itself (`//action:paused`): no commands, no scripts. */
  markPaused(): void {
    const phase = this.phase;
    if (phase !== 'PRINTING' && phase !== 'STARTING' && phase !== 'RESUMING') return;
    this.engine.setFeed(null);
    this.move('PAUSED');
    this.releasePauseWaiters();
  }

  resume(local = true): void {
    if (this.phase !== 'PAUSED' && this.phase !== 'PAUSING') return;
    this.move('RESUMING');
    if (local) for (const l of this.opts.onResume ?? []) this.engine.enqueue(l);
    this.engine.marker(() => {
      if (this.phase !== 'RESUMING') return;
      this.move('PRINTING');
      this.engine.setFeed(this);
    });
    this.releasePauseWaiters();
  }

  cancel(): Promise<JobOutcome> {
    if (this.phase === 'ENDED' || this.phase === 'CANCELLING') return this.done;
    this.transferEnding = false;
    this.engine.setFeed(null);
    this.move('CANCELLING');
    // Break a running M109/M190 so the cancel does not wait for the heat-up.
    if ((this.opts.abortHeatupOnCancel ?? true) && !this.opts.transfer) this.engine.enqueue('M108');
    for (const l of this.opts.onCancel ?? []) this.engine.enqueue(l);
    this.engine.marker(() => this.end('cancelled'));
    this.releasePauseWaiters();
    return this.done;
  }

  /** The link failed (error, disconnect, printer reset): the job ends at once with `error`. */
  abort(error: string): void {
    if (this.ended) return;
    this.end('error', error);
  }

  /**
   * Every line is written: Finishing once the last one is acknowledged (a pause until then still pauses the job; a
   * resume comes back here).
   */
  private finish(): void {
    if (this.phase !== 'PRINTING') return;
    this.engine.setFeed(null);
    this.engine.marker(() => {
      if (this.phase !== 'PRINTING') return;
      this.listener.progress?.(this.filepos);
      if (!this.opts.transfer) {
        this.move('FINISHING');
        this.engine.enqueue('M400');
      } else this.transferEnding = true;
      for (const l of this.opts.epilogue ?? []) this.engine.enqueue(l);
      this.engine.marker(() => this.end('done'));
    });
  }

  private end(outcome: JobOutcome, error?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.linkFilter?.route(null);
    this.engine.setJobActive(false);
    this.engine.setFeed(null);
    this.releasePauseWaiters();
    this.lines.close();
    try {
      // The owner reports the end (PrintDone, PrintCancelled) before the link says Operational, as OctoPrint does.
      this.listener.finished(outcome, this.filepos, error);
    } finally {
      if (this.engine.isOperational()) {
        this.lifecycle.end();
        this.listener.stateChanged?.('OPERATIONAL');
      } else this.lifecycle.reset();
      this.resolveDone(outcome);
    }
  }

  private move(state: Exclude<JobState, 'IDLE'>): void {
    if (this.lifecycle.move(state)) this.listener.stateChanged?.(state);
  }

  private releasePauseWaiters(): void {
    const w = this.pauseWaiters;
    this.pauseWaiters = [];
    for (const fn of w) fn();
  }
}
