// The printer link in its own thread (src/printer/link/link-thread.ts), seen from the main thread: commands and the job's lines go
// out as messages, hooks come back batched per turn of the thread, and the getters read a mirror those batches carry.
import type { Worker } from 'node:worker_threads';
import type { EnqueueOptions, JobFeed } from '../../protocol/engine.ts';
import type { DetectionCandidate } from '../../protocol/detection.ts';
import type { LinkStateId } from '../../protocol/connection-state.ts';
import { commandCode, toolNumber } from '../../gcode/line.ts';
import { PrinterLineRules, type ToolChangeLines } from './printer-line-rules.ts';
import { isLabelComment } from '../../objects/object-labels.ts';
import type { EngineLink, LinkOptions, SentTail } from './engine-link.ts';
import type { EngineHooks } from '../../protocol/hooks.ts';
import {
  STREAM_HIGH, TERMINAL_SENT, type FromLinkThread, type HookEvent, type LinkCommands, type LinkMirror, type LinkThreadInit, type ObjectSkipPlan,
  type StreamItem, type ToLinkThread,
} from './link-messages.ts';

/** Starts a link thread with its init data (main.ts knows where its code is). */
export type LinkThreadSpawner = (init: LinkThreadInit) => Promise<Worker>;

const CLOSED: ReadonlySet<string> = new Set(['OFFLINE', 'CLOSED', 'CLOSED_WITH_ERROR']);

export class WorkerLink implements EngineLink {
  private m: LinkMirror = {
    state: 'OFFLINE', error: '', connectedPort: '', connectedBaudrate: 0, linesInFlight: 0, consumed: 0, queuedCommands: 0, enqueued: 0,
    staged: false, currentTool: 0, firmwareName: '', flowControl: 'ping-pong', sawStart: false,
    resends: { count: 0, transmitted: 0, ratio: 0 }, currentZ: null, currentF: null,
  };
  private stateId: LinkStateId = 'OFFLINE';
  private errorText = '';
  private tail: Array<{ n: number; wire: string }> = [];
  private worker: Worker | null = null;
  private starting: Promise<Worker> | null = null;
  private disposed = false;
  private nextId = 1;
  private readonly markers = new Map<number, () => void>();
  private readonly replies = new Map<number, () => void>();
  private feed: JobFeed | null = null;
  private lastFeed: JobFeed | null = null;
  /** Set while the feed is asked for lines: what the streamer does meanwhile goes into the stream, in order. */
  private filling: StreamItem[] | null = null;
  /** Stream lines sent to the thread so far (see LinkMirror.consumed). */
  private posted = 0;
  /** Commands sent to the thread so far (see LinkMirror.enqueued). */
  private commandsPosted = 0;
  /** The thread asked for more lines and has not had any since. */
  private wanted = false;
  /** The last T queued or streamed, until the thread reports it selected. */
  private pendingTool: number | null = null;
  /** The thread filters the job's objects (skipObjects): lines not of the file and comment labels are marked. */
  private skipping = false;
  /** Main-thread rules: the tool-change scripts are rendered here, where their templates live. */
  private readonly rules: PrinterLineRules;

  constructor(private readonly opts: LinkOptions, private readonly spawn: LinkThreadSpawner,
    private readonly init: Pick<LinkThreadInit, 'config' | 'virtualSdFolder' | 'nice'>) {
    this.rules = new PrinterLineRules({ toolChangeLines: opts.rules.toolChangeLines });
  }

  get state(): LinkStateId { return this.stateId; }
  get error(): string { return this.errorText; }
  isOperational(): boolean { return this.stateId === 'OPERATIONAL'; }
  get connectedPort(): string { return this.m.connectedPort; }
  get connectedBaudrate(): number { return this.m.connectedBaudrate; }
  get linesInFlight(): number { return this.m.linesInFlight + this.unsentLines; }
  get firmwareName(): string { return this.m.firmwareName; }
  get currentTool(): number { return this.m.currentTool; }
  get sawStart(): boolean { return this.m.sawStart; }
  get flowControl(): string { return this.m.flowControl; }
  get currentZ(): number | null { return this.m.currentZ; }
  get currentF(): number | null { return this.m.currentF; }
  /** The thread, for tests that end it the hard way. */
  get thread(): Worker | null { return this.worker; }
  resendStats(): { count: number; transmitted: number; ratio: number } { return { ...this.m.resends }; }

  sentTail(max: number): SentTail {
    return { lines: this.tail.slice(-max), unsent: (this.m.staged ? 1 : 0) + this.unsentLines };
  }

  get unsentLines(): number { return Math.max(0, this.posted - this.m.consumed); }
  get queuedCommands(): number { return this.m.queuedCommands + Math.max(0, this.commandsPosted - this.m.enqueued); }

  // ---------------------------------------------------------------- the link's lifecycle

  private start(): Promise<Worker> {
    this.starting ??= this.spawn({ ...this.init, settings: this.opts.settings, machine: this.opts.machine }).then((w) => {
      this.worker = w;
      w.on('message', (msg: FromLinkThread) => this.receive(msg));
      let failure: string | null = null;
      w.on('error', (err) => { failure = err.message; });
      w.on('exit', (code) => this.exited(failure ?? `exit code ${code}`));
      if (this.disposed) void w.terminate();
      return w;
    });
    return this.starting;
  }

  /** Asks the thread to run one of its commands (LinkCommands): the name and the arguments are checked against it. */
  private post<K extends keyof LinkCommands>(t: K, ...args: Parameters<LinkCommands[K]>): void {
    const msg = { t, args } as ToLinkThread;
    if (this.worker) this.worker.postMessage(msg);
    else void this.start().then((w) => w.postMessage(msg), () => {});
  }

  /** A command whose first argument is the id of the thread's reply, once it has run. */
  private request<K extends 'connect' | 'connectAuto' | 'disconnect'>(t: K, ...rest: Parameters<LinkCommands[K]> extends [number, ...infer R] ? R : never): Promise<void> {
    const id = this.nextId++;
    const msg = { t, args: [id, ...rest] } as unknown as ToLinkThread;
    return new Promise<void>((resolve) => {
      this.replies.set(id, resolve);
      this.start().then((w) => w.postMessage(msg), (err: unknown) => {
        this.replies.delete(id);
        this.failed(`The printer link thread did not start: ${(err as Error).message}`);
        resolve();
      });
    });
  }

  connect(port: string, baudrate: number): Promise<void> {
    return this.request('connect', port, baudrate);
  }

  connectAuto(candidates: DetectionCandidate[]): Promise<void> {
    return this.request('connectAuto', candidates);
  }

  async disconnect(): Promise<void> {
    if (this.disposed) return;
    // Never started: nothing to tell a thread, but nothing may start one later either.
    if (!this.starting) return this.dispose();
    await this.request('disconnect');
    this.dispose();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    void this.worker?.terminate();
  }

  /** The thread ended: expected after dispose, otherwise the link is lost and says so. */
  private exited(reason: string): void {
    this.worker = null;
    if (!this.disposed) {
      this.disposed = true;
      this.failed(`The printer link thread stopped (${reason})`);
    }
    const waiting = [...this.replies.values()];
    this.replies.clear();
    this.markers.clear();
    for (const resolve of waiting) resolve();
  }

  private failed(text: string): void {
    if (CLOSED.has(this.stateId)) return;
    const h = this.opts.hooks;
    this.stateId = 'ERROR';
    this.errorText = text;
    h.stateChanged?.('ERROR', text);
    h.error?.(text, 'connection');
    this.stateId = 'CLOSED_WITH_ERROR';
    h.stateChanged?.('CLOSED_WITH_ERROR', text);
    h.disconnected?.();
  }

  // ---------------------------------------------------------------- what the thread tells

  private receive(msg: FromLinkThread): void {
    this.m = msg.mirror;
    if (msg.mirror.tail) this.tail = msg.mirror.tail;
    if (this.pendingTool === this.m.currentTool || (this.m.queuedCommands === 0 && this.unsentLines === 0)) this.pendingTool = null;
    const hooks = this.opts.hooks;
    for (const ev of msg.events) {
      try {
        switch (ev[0]) {
          case 'hook':
            if (ev[1] === 'stateChanged') {
              this.stateId = ev[2][0] as LinkStateId;
              this.errorText = ev[2][1];
            }
            callHook(hooks, ev);
            break;
          case 'terminal': this.terminal(ev[1]); break;
          case 'marker': {
            const fn = this.markers.get(ev[1]);
            this.markers.delete(ev[1]);
            fn?.();
            break;
          }
          case 'reply': {
            const resolve = this.replies.get(ev[1]);
            this.replies.delete(ev[1]);
            resolve?.();
            break;
          }
          case 'host':
            this.feed?.hostCommand(ev[1]);
            this.resumeFeedIfKept();
            break;
          case 'pausing':
            this.feed?.pausingCommand(ev[1]);
            this.resumeFeedIfKept();
            break;
          case 'more':
            this.wanted = true;
            break;
          case 'dropped': for (const id of ev[1]) this.markers.delete(id); break;
          case 'z': this.opts.rules.zChanged?.(ev[1], ev[2]); break;
        }
      } catch (err) {
        hooks.message?.(`Internal error in the printer link's ${ev[0]} event: ${(err as Error).message}`);
      }
    }
    // Asked until answered with lines: the feed may have none yet (a read, a hold, the end waiting for the stream to
    // drain), and every batch from the thread is a new chance.
    if (this.wanted) this.fill();
  }

  /** The terminal's lines of a batch, back into the `sent` and `received` hooks, in order. */
  private terminal(text: string): void {
    const { sent, received } = this.opts.hooks;
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const line = text.slice(start + 1, nl);
      if (text[start] === TERMINAL_SENT) sent?.(line);
      else received?.(line);
      start = nl + 1;
    }
  }

  /** The thread stops its feed at a pausing line; when the streamer did not pause after all, it goes on. */
  private resumeFeedIfKept(): void {
    if (this.feed !== null) this.post('setFeed', true, false);
  }

  // ---------------------------------------------------------------- driving the link

  fakeAck(): void { this.post('fakeAck'); }

  enqueue(cmd: string, opts: EnqueueOptions = {}): void {
    const code = commandCode(cmd);
    let cmds = [cmd];
    if (code === 'T') {
      cmds = this.rules.expand(cmd, code, { jobActive: false, tool: this.m.currentTool, plannedTool: this.plannedTool() }) ?? cmds;
      for (const c of cmds) if (commandCode(c) === 'T') this.pendingTool = toolNumber(c) ?? this.pendingTool;
    }
    for (const c of cmds) {
      if (this.filling) this.filling.push(opts.once ? { e: c, once: true } : { e: c });
      else {
        this.commandsPosted++;
        this.post('enqueue', c, { poll: opts.poll, once: opts.once });
      }
    }
  }

  marker(fn: () => void): void {
    const id = this.nextId++;
    this.markers.set(id, fn);
    if (this.filling) this.filling.push({ m: id });
    else this.post('marker', id);
  }

  setFeed(feed: JobFeed | null): void {
    if (feed === null) {
      if (this.feed === null) return;
      this.feed = null;
      if (this.filling) this.filling.push({ off: 1 });
      else this.post('setFeed', false, false);
      return;
    }
    const reset = feed !== this.lastFeed;
    this.feed = this.lastFeed = feed;
    this.post('setFeed', true, reset);
    this.fill();
  }

  setJobActive(active: boolean): void {
    if (!active) {
      this.feed = null;
      this.lastFeed = null;
      this.skipping = false;
    }
    this.post('setJobActive', active);
  }

  setOffsets(offsets: Record<string, number>): void { this.post('setOffsets', offsets); }

  /** The job's object filter runs in the thread, on the lines as the engine takes them (LinkCommands.skipObjects). */
  skipObjects(plan: ObjectSkipPlan | null): void {
    this.skipping = plan !== null;
    this.post('skipObjects', plan);
  }

  cancelObject(id: number): void { this.post('cancelObject', id); }
  pump(): void { this.fill(); }
  plannedTool(): number { return this.pendingTool ?? this.m.currentTool; }
  toolChange(line: string, plannedTool: number): ToolChangeLines | null { return this.rules.toolChange(line, plannedTool); }

  /** Tops the thread's stream up to STREAM_HIGH lines with what the feed has ready now. */
  private fill(): void {
    const feed = this.feed;
    if (this.filling || this.disposed || feed === null) return;
    const room = STREAM_HIGH - this.unsentLines;
    const items: StreamItem[] = [];
    let n = 0;
    this.filling = items;
    try {
      while (n < room && this.feed === feed) {
        const line = feed.next();
        if (line === null) break;
        // What the engine would skip (blank, comment only) is not sent: the stream counts command lines, as
        // JobStreamer.positionBack does.
        const semi = line.indexOf(';');
        if ((semi === -1 ? line : line.slice(0, semi)).trim() === '') {
          // The thread's object filter reads the file's comment labels (not counted: they are not sent).
          if (this.skipping && feed.fileLine !== false && isLabelComment(line)) items.push({ l: line });
          continue;
        }
        const c0 = line.charCodeAt(0);
        if (c0 === 84 || c0 === 116) this.pendingTool = toolNumber(line) ?? this.pendingTool;
        items.push(this.skipping && feed.fileLine === false ? { x: line } : line);
        // Counted at once: the streamer asks unsentLines while it answers (the end of the file waits for them).
        this.posted++;
        n++;
      }
    } finally {
      this.filling = null;
    }
    if (items.length === 0) return;
    this.wanted = false;
    this.post('stream', items);
  }
}

/** Calls the hook a hook event names with its arguments (the one place an event becomes a call). */
function callHook(hooks: EngineHooks, ev: HookEvent): void {
  (hooks[ev[1]] as ((...args: HookEvent[2]) => void) | undefined)?.(...ev[2]);
}
