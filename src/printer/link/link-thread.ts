// The printer link thread's composition root (main.ts's counterpart for that thread): the protocol engine, its
// transports (serial, the virtual printer) and the line rules, driven by messages from printer/worker-link.ts. Here,
// firmware replies never queue behind HTTP or push work on the main thread.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { capHeapHeadroomAsLaunched } from '../../core/gc.ts';
import { ProtocolEngine, type JobFeed } from '../../protocol/engine.ts';
import type { EngineHooks } from '../../protocol/hooks.ts';
import { PrinterLineRules } from './printer-line-rules.ts';
import { ObjectSkipFilter } from '../../objects/skip-filter.ts';
import {
  runCommand, STREAM_LOW, TERMINAL_RECEIVED, TERMINAL_SENT, type FromLinkThread, type HookEvent, type LinkCommands, type LinkEvent,
  type LinkMirror, type LinkThreadInit, type RelayedHook, type StreamItem, type ToLinkThread,
} from './link-messages.ts';
import { createTransportFactory } from '../../transports/transport-factory.ts';

const port = parentPort!;
const init = workerData as LinkThreadInit;

/**
 * A head start with the scheduler: on a busy 2-core board the main thread (HTTP, push) and other processes are
 * runnable all the time, and each firmware reply waits for this thread to be scheduled. Linux applies a nice level to
 * the one thread named by its id; lowering it needs CAP_SYS_NICE (or RLIMIT_NICE), otherwise the thread stays as is.
 */
function raisePriority(nice: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // Not Linux, or not allowed: the thread runs at the process's priority.
  }
}
if (init.nice !== null) raisePriority(init.nice);
capHeapHeadroomAsLaunched();
/**
 * No reply spin here (serial.replySpinMicros is for a link on the main thread, whose event loop would otherwise sleep
 * between lines): this thread has nothing else to do, and spinning at its raised priority took the CPU from the rest
 * of a busy 2-core machine: under push+wrk, back-to-back runs printed at 1,490–1,825 lines/s with the spin and at
 * 2,014–2,549 without it (bench/streaming.ts, shared machine, load 4–10).
 */
const config = { ...init.config, serial: { ...init.config.serial, replySpinMicros: 0 } };
const create = createTransportFactory({ settings: () => config, virtualSdFolder: init.virtualSdFolder });

let events: LinkEvent[] = [];
let scheduled: 'now' | 'soon' | null = null;
let timer: NodeJS.Timeout | null = null;
let stateChanged = false;

/** Markers, replies and state changes go at the end of this turn; the terminal's lines may wait a few ms to batch. */
function emit(ev: LinkEvent, urgent: boolean): void {
  takeTerminal();
  events.push(ev);
  if (urgent) {
    if (scheduled === 'now') return;
    if (timer) clearTimeout(timer);
    timer = null;
    scheduled = 'now';
    setImmediate(flush);
  } else if (scheduled === null) schedule();
}

/** A batch a few ms from now. */
function schedule(): void {
  scheduled = 'soon';
  timer = setTimeout(flush, 5);
}

function flush(): void {
  if (timer) clearTimeout(timer);
  timer = null;
  scheduled = null;
  takeTerminal();
  const out: FromLinkThread = { at: Date.now(), events, mirror: mirror() };
  events = [];
  port.postMessage(out);
}

/**
 * The terminal's lines since the last event (see TerminalEvent): appended per line, moved into the events as one string
 * before any other event, so the order stays the thread's.
 */
let terminal = '';

function takeTerminal(): void {
  if (terminal === '') return;
  events.push(['terminal', terminal]);
  terminal = '';
}

/** Whether a hook's batch goes at the end of this turn (true) or may wait a few ms for more (see emit). */
const URGENT: { [K in RelayedHook]: boolean } = {
  stateChanged: true, connected: true, disconnected: true, temperatures: false, targetReported: true, firmware: true,
  capability: true, position: false, sdReply: true, sdList: true, commandSent: false, toolChanged: true, action: true,
  cancelOnError: true, firmwareError: true, error: true, commandSuppressed: true, printerReset: true, emergencyStop: true,
  message: true, invalidTool: true,
};

function relay<K extends RelayedHook>(name: K): (...args: Parameters<NonNullable<EngineHooks[K]>>) => void {
  const urgent = URGENT[name];
  return (...args) => {
    if (name === 'stateChanged') stateChanged = true;
    takeTerminal();
    emit(['hook', name, args] as HookEvent, urgent);
  };
}

const hooks: Required<EngineHooks> = {
  sent: (wire) => {
    terminal += TERMINAL_SENT + wire + '\n';
    if (scheduled === null) schedule();
  },
  received: (line) => {
    terminal += TERMINAL_RECEIVED + line + '\n';
    if (scheduled === null) schedule();
  },
  stateChanged: relay('stateChanged'), connected: relay('connected'), disconnected: relay('disconnected'),
  temperatures: relay('temperatures'), targetReported: relay('targetReported'), firmware: relay('firmware'),
  capability: relay('capability'), position: relay('position'), sdReply: relay('sdReply'), sdList: relay('sdList'),
  commandSent: relay('commandSent'), toolChanged: relay('toolChanged'), action: relay('action'),
  cancelOnError: relay('cancelOnError'), firmwareError: relay('firmwareError'), error: relay('error'),
  commandSuppressed: relay('commandSuppressed'), printerReset: relay('printerReset'), emergencyStop: relay('emergencyStop'),
  message: relay('message'), invalidTool: relay('invalidTool'),
};

const engine = new ProtocolEngine(hooks, init.settings, undefined, init.machine);
// Urgent: a layer change is a timelapse frame, and frames closer than minDelay are skipped, so batching them would merge layers.
const rules = new PrinterLineRules({ zChanged: (z, old) => emit(['z', z, old], true) });
engine.setLineRules(rules);

// ------------------------------------------------------------------ the job's stream

/**
 * The stream as the main thread's batches came, not copied into one array. A taken item's slot is cleared at once, so a
 * line lives only until the engine takes it. One long array, compacted now and then, also kept up to 4,096 taken lines
 * alive and was copied as it grew: more of them outlived the young generation, and this thread's old generation grew
 * ≈ 300 KB/s while printing at 3,300 lines/s, ≈ 220 KB/s since (bench/memory.ts, with --trace-gc).
 */
let batches: Array<Array<StreamItem | null>> = [];
/** Index of the next item in batches[0]. */
let head = 0;
let feedOn = false;
let consumed = 0;
/** Lines in the stream not yet taken; `asked` once a refill was requested and not answered yet. */
let lines = 0;
let asked = false;
/**
 * The job's object filter (LinkCommands.skipObjects), run where the engine takes a line, so a cancel acts on every
 * line not yet taken for the wire; `out` holds what it put in a line's place, `outIdx` the next of those to send.
 */
let skip: ObjectSkipFilter | null = null;
let out: readonly string[] | null = null;
let outIdx = 0;

/** The next of the lines the filter put in a file line's place, if any are left. */
function takeOut(): string | null {
  if (out === null) return null;
  const line = out[outIdx++];
  if (outIdx >= out.length) out = null;
  return line;
}

/** A file line through the filter: the line to send now (the rest waits in `out`), or null when it was dropped. */
function filtered(filter: ObjectSkipFilter, line: string): string | null {
  const res = filter.filter(line);
  if (res.length === 1 && res[0] === line) return line;
  if (res.length === 0) return null;
  out = res;
  outIdx = 0;
  return takeOut();
}

function marker(id: number): void {
  engine.marker(() => emit(['marker', id], true));
}

/** The next item of the stream without taking it; undefined when the stream is empty. */
function peek(): StreamItem | undefined {
  while (batches.length > 0) {
    const batch = batches[0];
    if (head < batch.length) return batch[head] ?? undefined;
    batches.shift();
    head = 0;
  }
  return undefined;
}

/** Takes the next item (see peek), clearing its slot. */
function take(): StreamItem | undefined {
  const item = peek();
  if (item !== undefined) batches[0][head++] = null;
  return item;
}

type ControlItem = Exclude<StreamItem, string | { x: string }>;

/** Control items (queued commands, markers, a label for the filter) up to the next line, in order. */
function control(item: ControlItem): void {
  if ('e' in item) engine.enqueue(item.e, { once: item.once });
  else if ('m' in item) marker(item.m);
  else if ('l' in item) {
    // A comment label: the filter's lines around it (the end of a skip) go out; the comment itself does not.
    if (skip === null) return;
    const res = skip.filter(item.l);
    const kept = res.filter((l) => l !== item.l);
    if (kept.length > 0) {
      out = out === null ? kept : [...out.slice(outIdx), ...kept];
      outIdx = 0;
    }
  } else feedOn = false;
}

/** Whether a stream item is a line (a file line, or one not of the file), not a control item. */
function isLine(item: StreamItem): item is string | { x: string } {
  return typeof item === 'string' || 'x' in item;
}

/** One per job: the engine drops a line it pulled ahead when the feed it came from is not the one resumed. */
function makeFeed(): JobFeed {
  return {
  next(): string | null {
    if (!feedOn) return null;
    const pending = takeOut();
    if (pending !== null) return pending;
    for (let item = take(); item !== undefined; item = take()) {
      if (typeof item === 'string' || 'x' in item) {
        consumed++;
        lines--;
        if (lines < STREAM_LOW && !asked) {
          asked = true;
          emit(['more'], true);
        }
        if (typeof item !== 'string') return item.x;
        if (skip === null) return item;
        const line = filtered(skip, item);
        // Dropped: its place in the stream is taken all the same (the main thread counts it as sent).
        if (line === null) continue;
        return line;
      }
      control(item);
      if (out !== null) return takeOut();
      // A label queues nothing: the next line is taken now (the engine's pump stops at a null with nothing queued).
      if ('l' in item) continue;
      if (!feedOn) {
        // The feed stopped (end of the file): what the streamer queued after that is not the feed's, it goes now.
        for (let next = peek(); next !== undefined && !isLine(next); next = peek()) control(take() as ControlItem);
      }
      // The engine runs what was queued before it asks for the next line.
      return null;
    }
    if (!asked) {
      asked = true;
      emit(['more'], true);
    } else if (consumed !== consumedTold && scheduled === null) {
      // Lines the filter dropped send nothing to the firmware, so nothing else may tell the main thread they are
      // gone: the end of the file waits for every line it handed over to be taken.
      schedule();
    }
    return null;
  },
  hostCommand(cmd: string): void {
    const name = cmd.slice(1).split(/\s+/)[0].toLowerCase();
    if (name === 'pause' || name === 'cancel' || name === 'abort') feedOn = false;
    emit(['host', cmd], true);
  },
  pausingCommand(cmd: string): void {
    feedOn = false;
    emit(['pausing', cmd], true);
  },
  };
}
let feed = makeFeed();

function dropStream(): void {
  const dropped: number[] = [];
  for (let item = take(); item !== undefined; item = take()) if (typeof item !== 'string' && 'm' in item) dropped.push(item.m);
  if (dropped.length > 0) emit(['dropped', dropped], true);
  batches = [];
  head = 0;
  out = null;
  // Dropped lines count as taken: the main thread's count of lines held here goes back to what is held.
  consumed += lines;
  lines = 0;
  asked = false;
}

/** Commands from the main thread's `enqueue` messages queued so far (LinkMirror.enqueued). */
let enqueued = 0;

/** `consumed` as the last mirror told it. */
let consumedTold = 0;

function mirror(): LinkMirror {
  consumedTold = consumed;
  const snap = engine.snapshot();
  const m: LinkMirror = {
    state: engine.state, error: engine.error, connectedPort: engine.connectedPort, connectedBaudrate: engine.connectedBaudrate,
    linesInFlight: engine.linesInFlight, consumed, queuedCommands: snap.queued, enqueued, staged: snap.staged,
    currentTool: engine.currentTool, firmwareName: engine.firmwareName, flowControl: engine.flowControl, sawStart: engine.sawStart,
    resends: engine.resendStats(), currentZ: rules.currentZ, currentF: rules.currentF,
  };
  if (stateChanged) {
    stateChanged = false;
    m.tail = engine.sentTail(64).lines;
  }
  return m;
}

function reply(id: number): void {
  emit(['reply', id], true);
}

const commands: LinkCommands = {
  connect: (id, name, baudrate) => void engine.connect({ transport: create(name, baudrate), port: name, baudrate }).finally(() => reply(id)),
  connectAuto: (id, candidates) => void engine.connectAuto(candidates, create).finally(() => reply(id)),
  disconnect: (id) => void engine.disconnect().finally(() => reply(id)),
  enqueue: (cmd, opts) => {
    engine.enqueue(cmd, opts);
    enqueued++;
  },
  marker,
  stream: (items) => {
    for (const item of items) if (typeof item === 'string' || 'x' in item) lines++;
    batches.push(items);
    asked = false;
    engine.pump();
  },
  setFeed: (on, reset) => {
    if (reset) {
      dropStream();
      feed = makeFeed();
    }
    feedOn = on;
    engine.setFeed(on ? feed : null);
  },
  setJobActive: (active) => {
    engine.setJobActive(active);
    if (!active) {
      feedOn = false;
      engine.setFeed(null);
      dropStream();
      skip = null;
    }
  },
  skipObjects: (plan) => {
    skip = plan === null ? null : new ObjectSkipFilter({ before: plan.before, after: plan.after }, plan.state);
    if (skip !== null) for (const id of plan!.cancelled) skip.cancel(id);
  },
  cancelObject: (id) => skip?.cancel(id),
  setOffsets: (offsets) => rules.setOffsets(offsets),
  pump: () => engine.pump(),
  fakeAck: () => engine.fakeAck(),
};

port.on('message', (msg: ToLinkThread) => runCommand(commands, msg));
