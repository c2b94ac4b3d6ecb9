// One job state machine for every job, streamed by the host or printed by the firmware from SD: the job states, the
// one table of allowed moves, what kind of job is under way (and so the printer's state texts), and the object both
// drivers (printer/job/job-stream.ts, printer/job/sd-job.ts) move through it.
import { STATE_TEXT, type ConnectionStateId } from '../printer-state.ts';

/** `IDLE`: no job (the printer shows the link's state, Operational). */
export type JobState = 'IDLE' | 'STARTING' | 'PRINTING' | 'PAUSING' | 'PAUSED' | 'RESUMING' | 'CANCELLING' | 'FINISHING'
  | 'TRANSFERING_FILE';

/** Allowed moves. A job that ends (done, cancelled, failed, the link lost) goes back to IDLE from wherever it is. */
export const JOB_TRANSITIONS: Record<JobState, readonly JobState[]> = {
  IDLE: ['STARTING', 'PRINTING', 'TRANSFERING_FILE'],
  STARTING: ['PRINTING', 'PAUSING', 'PAUSED', 'CANCELLING', 'IDLE'],
  PRINTING: ['PAUSING', 'PAUSED', 'CANCELLING', 'FINISHING', 'IDLE'],
  PAUSING: ['PAUSED', 'RESUMING', 'CANCELLING'],
  PAUSED: ['RESUMING', 'PRINTING', 'CANCELLING'],
  RESUMING: ['PRINTING', 'PAUSING', 'PAUSED', 'CANCELLING'],
  CANCELLING: ['IDLE'],
  FINISHING: ['IDLE'],
  TRANSFERING_FILE: ['IDLE'],
};

/**
 * What drives the job under way: the host streaming a file to print (`print`), the host writing a file to the SD
 * card (`transfer`, M28 … M29), the firmware printing from its own card (`sd`).
 */
export type JobKind = 'print' | 'transfer' | 'sd';

/** Texts that differ while the firmware itself prints from SD, or while a file is streamed to SD (OctoPrint's). */
const KIND_TEXT: Record<JobKind, Partial<Record<JobState, string>>> = {
  print: {},
  sd: { STARTING: 'Starting print from SD', PRINTING: 'Printing from SD' },
  transfer: { STARTING: 'Starting to send file to SD', PRINTING: 'Sending file to SD' },
};

/** The printer's state text for `id` while a job of `kind` is under way (none: the plain texts). */
export function stateText(id: ConnectionStateId, kind: JobKind | null): string {
  return (kind ? KIND_TEXT[kind][id as JobState] : undefined) ?? STATE_TEXT[id];
}

export function canJobTransition(from: JobState, to: JobState): boolean {
  return from === to || JOB_TRANSITIONS[from].includes(to);
}

/** What the printer shows: the link's state, or the job's while the link is up and a job runs. */
export function displayState(link: ConnectionStateId, job: JobState): ConnectionStateId {
  return link === 'OPERATIONAL' && job !== 'IDLE' ? job : link;
}

/**
 * The one lifecycle as a job's driver moves it (JobLifecycle is one). The link owns the instance; the streamer and the
 * SD driver are handed it, so the printer's state and its texts follow from the same moves.
 */
export interface JobMoves {
  readonly state: JobState;
  readonly kind: JobKind | null;
  move(to: JobState): boolean;
  end(): void;
  reset(): void;
}

export class JobLifecycle implements JobMoves {
  private current: JobState = 'IDLE';
  private kindOf: JobKind | null = null;

  /** `allowed`: moves are refused while it says no (the link is down). */
  constructor(private readonly changed: (state: JobState) => void = () => {}, private readonly allowed: () => boolean = () => true) {}

  get state(): JobState { return this.current; }

  /** The kind of the job under way; null once the machine is back in IDLE. */
  get kind(): JobKind | null { return this.kindOf; }

  /**
   * The next job is of `kind`: said before its first move out of IDLE, so the state text of that move already says
   * it. Ignored while a job is under way (it keeps its kind); a first move refused forgets it.
   */
  begin(kind: JobKind): void {
    if (this.current === 'IDLE') this.kindOf = kind;
  }

  /** Moves when the table allows it; true when the job is (now) in `to`. Listeners hear real changes only. */
  move(to: JobState): boolean {
    if (to === this.current) return true;
    if (!this.allowed() || !canJobTransition(this.current, to)) {
      if (this.current === 'IDLE') this.kindOf = null;
      return false;
    }
    this.current = to;
    if (to === 'IDLE') this.kindOf = null;
    this.changed(to);
    return true;
  }

  /** The job ended: back to IDLE from wherever it was (announced while the link is up, silent when it is down). */
  end(): void {
    this.kindOf = null;
    if (this.current === 'IDLE') return;
    this.current = 'IDLE';
    if (this.allowed()) this.changed('IDLE');
  }

  /** The link went down: no job any more, nothing to announce (the link's own state says it). */
  reset(): void {
    this.current = 'IDLE';
    this.kindOf = null;
  }
}
