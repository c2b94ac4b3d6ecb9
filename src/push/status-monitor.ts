// Printer status monitor for the push channel: gathers temperatures, terminal lines and raw firmware lines as they
// arrive and turns them, every tick, into one shared delta (the basis of every client's `current`).
import type { TemperatureHistoryEntry } from '../printer/types.ts';
import type { JobStatusSource, PrinterStatusSource } from './sources.ts';
import type { PrinterStateSnapshot } from '../printer/types.ts';
import { stateWire, type StateWire } from '../octoprint/state.ts';

/** Lines kept for `history` (OctoPrint sends the last 300). */
export const HISTORY_LINES = 300;
/**
 * Terminal lines carried by one `current`: a flood beyond this keeps the newest. 300 lines per 500 ms is what
 * ok-per-line streaming over 115200 baud produces (Send + Recv per line); only faster links lose lines, and no terminal
 * shows more (history holds 300 too). Without the cap 200 clients of a fast link move tens of MB/s of terminal text,
 * which costs the printer link measurable throughput (bench/push.ts).
 */
export const MAX_LINES_PER_TICK = 300;

export interface Marking { type: string; label: string; time: number }

/** The parts of `current` every client sees the same way. */
export interface StatusBase {
  state: StateWire;
  job: Record<string, unknown>;
  progress: Record<string, unknown>;
  currentZ: number | null;
  offsets: Record<string, number>;
  resends: { count: number; transmitted: number; ratio: number };
  markings: Marking[];
  busyFiles: Array<{ origin: string; path: string }>;
}

export interface StatusDelta {
  base: StatusBase;
  /** The printer state it shows (text, error, flags): deltas of different states are never merged into one `current`. */
  stateKey: string;
  temps: TemperatureHistoryEntry[];
  logs: string[];
  messages: string[];
  /** Unix seconds when the delta was taken. */
  serverTime: number;
}

export function stateKey(s: { text: string; flags: object; error: string }): string {
  let bits = '';
  const flags = s.flags as Record<string, boolean>;
  for (const k in flags) bits += flags[k] ? '1' : '0';
  return `${s.text}\u0000${s.error}\u0000${bits}`;
}

function pushCapped(target: string[], lines: readonly string[], cap: number): void {
  for (const l of lines) target.push(l);
  if (target.length > cap * 2) target.splice(0, target.length - cap);
}

export class StatusMonitor {
  private recentLogs: string[] = [];
  private recentMessages: string[] = [];
  private tickTemps: TemperatureHistoryEntry[] = [];
  private tickLogs: string[] = [];
  private tickMessages: string[] = [];
  private markings: Marking[] = [];
  private lastBaseKey = '';
  private dirty = true;
  private unsubscribe: (() => void) | undefined;
  private lastStateKey = '';
  /** Deltas cut at state changes, waiting for the next round of sending (takeCuts). */
  private cuts: StatusDelta[] = [];
  /** Called when a state change cut a delta: the push service sends it without waiting for the next tick. */
  onCut: (() => void) | undefined;

  constructor(
    private readonly printer: PrinterStatusSource,
    private readonly jobs: JobStatusSource,
    private readonly now: () => number,
    private readonly cutoffSeconds: () => number,
  ) {}

  start(): void {
    this.lastStateKey = stateKey(this.printer.state());
    this.unsubscribe = this.printer.subscribe({
      state: (s) => this.stateChanged(s),
      z: () => { this.dirty = true; },
      temperature: (entry) => {
        this.tickTemps.push(entry);
        if (this.tickTemps.length > MAX_LINES_PER_TICK) this.tickTemps.shift();
      },
      log: (lines) => {
        pushCapped(this.recentLogs, lines, HISTORY_LINES);
        pushCapped(this.tickLogs, lines, MAX_LINES_PER_TICK);
      },
      messages: (lines) => {
        pushCapped(this.recentMessages, lines, HISTORY_LINES);
        pushCapped(this.tickMessages, lines, MAX_LINES_PER_TICK);
      },
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /**
   * A state may last less than a tick (Finishing → Operational in the same millisecond), yet clients such as farm
   * managers act on it: each state gets a delta of its own, taken now with the lines so far.
   */
  private stateChanged(s: PrinterStateSnapshot): void {
    this.dirty = true;
    const key = stateKey(s);
    if (key === this.lastStateKey) return;
    this.lastStateKey = key;
    const base = this.base(s);
    this.lastBaseKey = JSON.stringify(base);
    this.dirty = false;
    this.cuts.push(this.take(base, key));
    this.onCut?.();
  }

  /** The deltas cut at state changes since the last call, oldest first. */
  takeCuts(): StatusDelta[] {
    if (this.cuts.length === 0) return [];
    const c = this.cuts;
    this.cuts = [];
    return c;
  }

  /** Something outside the printer listener changed (job, files, markings): the next tick sends a `current`. */
  touch(): void {
    this.dirty = true;
  }

  mark(m: { type: string; label: string; time?: number }): void {
    this.markings.push({ type: m.type, label: m.label, time: m.time ?? this.now() / 1000 });
    this.dirty = true;
  }

  private base(state?: PrinterStateSnapshot): StatusBase {
    const s = state ?? this.printer.state();
    const cutoff = this.now() / 1000 - this.cutoffSeconds();
    if (this.markings.length && this.markings[0].time < cutoff) this.markings = this.markings.filter((m) => m.time >= cutoff);
    return {
      state: stateWire(s),
      job: this.jobs.job(),
      progress: this.jobs.progress(),
      currentZ: this.printer.currentZ(),
      offsets: this.printer.offsets(),
      resends: this.printer.resends(),
      markings: this.markings,
      busyFiles: this.jobs.busyFiles(),
    };
  }

  /** The delta since the previous tick, or undefined when nothing changed. */
  tick(): StatusDelta | undefined {
    const base = this.base();
    const key = JSON.stringify(base);
    const changed = this.dirty || key !== this.lastBaseKey || this.tickTemps.length > 0 || this.tickLogs.length > 0 || this.tickMessages.length > 0;
    this.dirty = false;
    this.lastBaseKey = key;
    if (!changed) return undefined;
    return this.take(base, stateKey(base.state));
  }

  /** A delta with the lines and points gathered since the last one. */
  private take(base: StatusBase, key: string): StatusDelta {
    const delta: StatusDelta = {
      base, stateKey: key, temps: this.tickTemps,
      logs: this.tickLogs.length > MAX_LINES_PER_TICK ? this.tickLogs.slice(-MAX_LINES_PER_TICK) : this.tickLogs,
      messages: this.tickMessages.length > MAX_LINES_PER_TICK ? this.tickMessages.slice(-MAX_LINES_PER_TICK) : this.tickMessages,
      serverTime: this.now() / 1000,
    };
    this.tickTemps = [];
    this.tickLogs = [];
    this.tickMessages = [];
    return delta;
  }

  /** Current status without new lines or points: the first `current` after `history` (sent even when idle). */
  snapshot(): StatusDelta {
    const base = this.base();
    return { base, stateKey: stateKey(base.state), temps: [], logs: [], messages: [], serverTime: this.now() / 1000 };
  }

  /** The one-off `history` payload (full temperature history, the last 300 lines). */
  history(): Record<string, unknown> & { logs: string[]; messages: string[] } {
    const b = this.base();
    return {
      state: b.state, job: b.job, progress: b.progress, currentZ: b.currentZ, offsets: b.offsets, resends: b.resends,
      temps: this.printer.temperatureHistory(),
      logs: this.recentLogs.slice(-HISTORY_LINES),
      messages: this.recentMessages.slice(-HISTORY_LINES),
      markings: b.markings,
      serverTime: this.now() / 1000,
    };
  }
}
