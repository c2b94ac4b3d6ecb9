// The printer link as LinkController and JobStreamer drive it, wherever it runs: LocalLink here, on the main thread,
// or WorkerLink (printer/worker-link.ts), which runs the engine and its transport in their own thread.
import { ProtocolEngine, type EnqueueOptions, type JobFeed, type MachineShape } from '../../protocol/engine.ts';
import type { EngineHooks } from '../../protocol/hooks.ts';
import type { DetectionCandidate } from '../../protocol/detection.ts';
import type { TransportFactory } from '../../protocol/line-transport.ts';
import type { EngineSettings, Timers } from '../../protocol/settings.ts';
import type { LinkStateId } from '../../protocol/connection-state.ts';
import { PrinterLineRules, type LineRulesEvents, type ToolChangeLines } from './printer-line-rules.ts';

/** Which lines the firmware may hold after a dropped link, and whether a job line was pulled but not written. */
export interface SentTail {
  lines: Array<{ n: number; wire: string }>;
  /** Job lines handed to the link but not written (a line pulled ahead, lines in a worker's prefetch buffer). */
  unsent: number;
}

export interface EngineLink {
  readonly state: LinkStateId;
  readonly error: string;
  isOperational(): boolean;
  readonly connectedPort: string;
  readonly connectedBaudrate: number;
  /** Lines handed to the link and not yet acknowledged (in flight, and any the link holds before writing them). */
  readonly linesInFlight: number;
  /** Job lines handed to the link that it has not taken for the wire yet (the link thread's prefetch). */
  readonly unsentLines: number;
  /** Commands queued for the link and not yet written: in its queue, or on their way to its thread. */
  readonly queuedCommands: number;
  readonly firmwareName: string;
  readonly currentTool: number;
  readonly sawStart: boolean;
  readonly flowControl: string;
  readonly currentZ: number | null;
  readonly currentF: number | null;
  resendStats(): { count: number; transmitted: number; ratio: number };
  sentTail(max: number): SentTail;

  connect(port: string, baudrate: number): Promise<void>;
  connectAuto(candidates: DetectionCandidate[]): Promise<void>;
  disconnect(): Promise<void>;
  /** Frees what the link holds (a worker thread) once it is no longer used; the link must be closed by then. */
  dispose(): void;
  fakeAck(): void;

  enqueue(cmd: string, opts?: EnqueueOptions): void;
  marker(fn: () => void): void;
  setFeed(feed: JobFeed | null): void;
  setJobActive(active: boolean): void;
  setOffsets(offsets: Record<string, number>): void;
  pump(): void;
  plannedTool(): number;
  /** The tool-change script lines for a job line about to be fed (PrinterLineRules.toolChange, the link's own rules). */
  toolChange(line: string, plannedTool: number): ToolChangeLines | null;
}

export interface LinkOptions {
  hooks: EngineHooks;
  settings: Partial<EngineSettings>;
  machine: MachineShape;
  rules: LineRulesEvents;
}

/** The engine on the calling thread: every getter is the engine's own. */
export class LocalLink implements EngineLink {
  readonly engine: ProtocolEngine;
  private readonly rules: PrinterLineRules;

  constructor(opts: LinkOptions, private readonly create: TransportFactory, timers: Timers) {
    this.engine = new ProtocolEngine(opts.hooks, opts.settings, timers, opts.machine);
    this.rules = new PrinterLineRules(opts.rules);
    this.engine.setLineRules(this.rules);
  }

  get state(): LinkStateId { return this.engine.state; }
  get error(): string { return this.engine.error; }
  isOperational(): boolean { return this.engine.isOperational(); }
  get connectedPort(): string { return this.engine.connectedPort; }
  get connectedBaudrate(): number { return this.engine.connectedBaudrate; }
  get linesInFlight(): number { return this.engine.linesInFlight; }
  get unsentLines(): number { return 0; }
  get queuedCommands(): number { return this.engine.queuedCommands; }
  get firmwareName(): string { return this.engine.firmwareName; }
  get currentTool(): number { return this.engine.currentTool; }
  get sawStart(): boolean { return this.engine.sawStart; }
  get flowControl(): string { return this.engine.flowControl; }
  get currentZ(): number | null { return this.rules.currentZ; }
  get currentF(): number | null { return this.rules.currentF; }
  resendStats(): { count: number; transmitted: number; ratio: number } { return this.engine.resendStats(); }

  sentTail(max: number): SentTail {
    const t = this.engine.sentTail(max);
    return { lines: t.lines, unsent: t.staged ? 1 : 0 };
  }

  connect(port: string, baudrate: number): Promise<void> {
    return this.engine.connect({ transport: this.create(port, baudrate), port, baudrate });
  }

  connectAuto(candidates: DetectionCandidate[]): Promise<void> { return this.engine.connectAuto(candidates, this.create); }
  disconnect(): Promise<void> { return this.engine.disconnect(); }
  dispose(): void {}
  fakeAck(): void { this.engine.fakeAck(); }
  enqueue(cmd: string, opts?: EnqueueOptions): void { this.engine.enqueue(cmd, opts); }
  marker(fn: () => void): void { this.engine.marker(fn); }
  setFeed(feed: JobFeed | null): void { this.engine.setFeed(feed); }
  setJobActive(active: boolean): void { this.engine.setJobActive(active); }
  setOffsets(offsets: Record<string, number>): void { this.rules.setOffsets(offsets); }
  pump(): void { this.engine.pump(); }
  plannedTool(): number { return this.engine.plannedTool(); }
  toolChange(line: string, plannedTool: number): ToolChangeLines | null { return this.rules.toolChange(line, plannedTool); }
}
