// One job lifecycle for every job, streamed by the host or printed by the firmware from SD: the job states, the one
// table of allowed moves, and the object both drivers (printer/job/job-stream.ts, printer/job/sd-job.ts) move through it.
import type { ConnectionStateId } from '../../protocol/connection-state.ts';

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

export function canJobTransition(from: JobState, to: JobState): boolean {
  return from === to || JOB_TRANSITIONS[from].includes(to);
}

/** What the printer shows: the link's state, or the job's while the link is up and a job runs. */
export function displayState(link: ConnectionStateId, job: JobState): ConnectionStateId {
  return link === 'OPERATIONAL' && job !== 'IDLE' ? job : link;
}

export class JobLifecycle {
  private current: JobState = 'IDLE';

  /** `allowed`: moves are refused while it says no (the link is down). */
  constructor(private readonly changed: (state: JobState) => void = () => {}, private readonly allowed: () => boolean = () => true) {}

  get state(): JobState { return this.current; }

  /** Moves when the table allows it; true when the job is (now) in `to`. Listeners hear real changes only. */
  move(to: JobState): boolean {
    if (to === this.current) return true;
    if (!this.allowed() || !canJobTransition(this.current, to)) return false;
    this.current = to;
    this.changed(to);
    return true;
  }

  /** The job ended: back to IDLE from wherever it was (announced while the link is up, silent when it is down). */
  end(): void {
    if (this.current === 'IDLE') return;
    this.current = 'IDLE';
    if (this.allowed()) this.changed('IDLE');
  }

  /** The link went down: no job any more, nothing to announce (the link's own state says it). */
  reset(): void {
    this.current = 'IDLE';
  }
}
