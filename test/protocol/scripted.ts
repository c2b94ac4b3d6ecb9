// Test doubles for the protocol engine: a scripted LineTransport, fake timers and a transcript runner.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { LineTransport, LineTransportEvents } from '../../src/protocol/line-transport.ts';
import type { Timers } from '../../src/protocol/settings.ts';
import { frameLine } from '../../src/gcode/line.ts';
import { ProtocolEngine } from '../../src/protocol/engine.ts';
import type { EngineHooks } from '../../src/protocol/hooks.ts';
import type { EngineSettings } from '../../src/protocol/settings.ts';
import { JobStreamer, type JobOutcome, type JobStreamListener, type JobStreamOptions } from '../../src/printer/job/job-stream.ts';
import type { JobLineBatch, JobLineSource } from '../../src/printer/job/job-line-cursor.ts';
import { JobLifecycle, displayState } from '../../src/printer/job/job-lifecycle.ts';
import { PrinterLineRules, type LineRulesEvents } from '../../src/printer/link/printer-line-rules.ts';
import { OPERATIONAL_STATES, type ConnectionStateId } from '../../src/printer/printer-state.ts';

export class ScriptedTransport implements LineTransport {
  readonly name = 'SCRIPTED';
  written: string[] = [];
  readIndex = 0;
  openError: Error | null = null;
  closed = false;
  private listeners: { [K in keyof LineTransportEvents]: Array<LineTransportEvents[K]> } = { line: [], close: [] };
  async open(): Promise<void> {
    if (this.openError) throw this.openError;
  }
  async write(line: string): Promise<void> {
    this.written.push(line);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
  on<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    (this.listeners[event] as Array<LineTransportEvents[E]>).push(fn);
  }
  off<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    const arr = this.listeners[event] as Array<LineTransportEvents[E]>;
    const i = arr.indexOf(fn);
    if (i >= 0) arr.splice(i, 1);
  }
  reply(line: string): void {
    for (const fn of [...this.listeners.line]) fn(line);
  }
  drop(error?: Error): void {
    for (const fn of [...this.listeners.close]) fn(error);
  }
  /** Next unread written line, or undefined. */
  take(): string | undefined {
    return this.readIndex < this.written.length ? this.written[this.readIndex++] : undefined;
  }
  unread(): string[] {
    return this.written.slice(this.readIndex);
  }
}

/**
 * The same, with the streaming path (`send`) a serial port offers: the engine then writes the first line of a turn
 * at once, coalesces the rest and frames job lines ahead. Written text is split back into lines for `take()`.
 */
export class StreamingScriptedTransport extends ScriptedTransport {
  sends = 0;
  /** Turns after which the engine said it waits on the firmware's reply (awaitingReply). */
  awaits = 0;
  awaitingReply(): void {
    this.awaits++;
  }
  send(text: string): void {
    this.sends++;
    assert.ok(text.endsWith('\n'), `send() text must end in a newline: ${JSON.stringify(text)}`);
    for (const line of text.slice(0, -1).split('\n')) this.written.push(line);
  }
}

export class FakeTimers implements Timers {
  private t = 0;
  private seq = 0;
  private pending = new Map<number, { at: number; fn: () => void }>();
  now(): number { return this.t; }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.t + ms, fn });
    return id;
  }
  clearTimeout(h: unknown): void { this.pending.delete(h as number); }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.pending) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.pending.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }
}

export const flush = (): Promise<void> => new Promise((r) => setImmediate(r));

export interface Rig {
  engine: ProtocolEngine;
  /** The printer's side of the line path (offsets, tool-change scripts, Z), as the printer service installs it. */
  rules: PrinterLineRules;
  lifecycle: JobLifecycle;
  transport: ScriptedTransport;
  timers: FakeTimers;
  states: ConnectionStateId[];
  events: Array<[string, unknown]>;
  job?: JobStreamer;
  outcome?: JobOutcome;
}

/** The printer shows the job's state while the link is Operational. */
export function rigState(rig: Rig): ConnectionStateId {
  return displayState(rig.engine.state, rig.lifecycle.state);
}

/** A job streamed through the rig's engine, driving the rig's lifecycle (as PrinterService.streamJob does). */
export function newJob(rig: Rig, source: JobLineSource, listener: JobStreamListener, opts: JobStreamOptions = {}): JobStreamer {
  return new JobStreamer(rig.engine, source, listener, opts, { lifecycle: rig.lifecycle, toolChange: (line, planned) => rig.rules.toolChange(line, planned) });
}

export function makeRig(settings: Partial<EngineSettings> = {}, extraHooks: EngineHooks & LineRulesEvents = {}, streaming = false): Rig {
  const timers = new FakeTimers();
  const transport = streaming ? new StreamingScriptedTransport() : new ScriptedTransport();
  const states: ConnectionStateId[] = [];
  const events: Array<[string, unknown]> = [];
  const record = (name: string) => (...args: unknown[]) => { events.push([name, args.length === 1 ? args[0] : args]); };
  // Like the printer service: actions drive the job, a lost link or a printer reset fails it.
  const rig = { transport, timers, states, events } as Rig;
  const hooks: EngineHooks = {
    stateChanged: (s) => {
      states.push(s);
      if (!OPERATIONAL_STATES.has(s)) {
        rig.lifecycle.reset();
        rig.job?.abort('link lost');
      }
    },
    temperatures: record('temperatures'),
    firmware: record('firmware'),
    capability: record('capability'),
    position: record('position'),
    sdList: record('sdList'),
    sdReply: record('sdReply'),
    action: (name, params) => {
      events.push(['action', [name, params]]);
      if (name === 'pause') void rig.job?.pause();
      else if (name === 'resume') rig.job?.resume();
      else if (name === 'cancel') void rig.job?.cancel();
    },
    cancelOnError: (error) => {
      events.push(['cancelOnError', error]);
      void rig.job?.cancel();
    },
    firmwareError: record('firmwareError'),
    error: record('error'),
    toolChanged: record('toolChanged'),
    commandSuppressed: record('commandSuppressed'),
    emergencyStop: record('emergencyStop'),
    printerReset: () => {
      events.push(['printerReset', null]);
      rig.job?.abort('printer reset');
    },
    ...extraHooks,
  };
  const { toolChangeLines, zChanged, ...engineHooks } = hooks as EngineHooks & LineRulesEvents;
  rig.engine = new ProtocolEngine(engineHooks, settings, timers);
  rig.rules = new PrinterLineRules({ toolChangeLines, zChanged: zChanged ?? record('zChanged') });
  rig.engine.setLineRules(rig.rules);
  rig.lifecycle = new JobLifecycle((st) => states.push(st === 'IDLE' ? 'OPERATIONAL' : st), () => rig.engine.isOperational());
  return rig;
}

export async function* batches(lines: string[], size = 3): AsyncGenerator<JobLineBatch> {
  let pos = 0;
  for (let i = 0; i < lines.length; i += size) {
    const chunk = lines.slice(i, i + size);
    const ends = chunk.map((l) => (pos += Buffer.byteLength(l) + 1));
    yield { lines: chunk, ends };
  }
}

/**
 * Runs a transcript: `> text` host must have written it next, `< text` firmware sends it, `! verb args` test actions
 * (connect, send CMD, job L1|L2|..., pause, resume, cancel, advance MS, state ID, close [error], outcome X,
 * settle, nothing-sent). Lines starting with `#` are comments.
 */
export async function runTranscript(rig: Rig, text: string): Promise<void> {
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n];
    if (raw.trim() === '' || raw.startsWith('#')) continue;
    const where = `transcript line ${n + 1}: ${raw}`;
    const kind = raw[0];
    let body = raw.slice(2);
    // `*?` stands for the checksum, so transcripts stay readable and hand-editable.
    if (body.endsWith('*?')) body = frameLine(Number(body.slice(1, body.indexOf(' '))), body.slice(body.indexOf(' ') + 1, -2));
    if (kind === '>') {
      await flush();
      assert.equal(rig.transport.take(), body, where);
    } else if (kind === '<') {
      rig.transport.reply(body);
    } else if (kind === '!') {
      const sp = body.indexOf(' ');
      const verb = sp === -1 ? body : body.slice(0, sp);
      const arg = sp === -1 ? '' : body.slice(sp + 1);
      switch (verb) {
        case 'connect':
          await rig.engine.connect({ transport: rig.transport, port: 'SCRIPTED', baudrate: 115200 });
          break;
        case 'ready':
          await ready(rig, arg || 'Marlin');
          break;
        case 'offsets':
          rig.rules.setOffsets(Object.fromEntries(arg.split(',').map((kv) => [kv.split('=')[0], Number(kv.split('=')[1])])));
          break;
        case 'send':
          rig.engine.enqueue(arg);
          break;
        case 'job':
          rig.job = newJob(rig, batches(arg.split('|')), { finished: (o) => { rig.outcome = o; } });
          rig.job.start();
          break;
        case 'pause': void rig.job?.pause(); break;
        case 'resume': rig.job?.resume(); break;
        case 'cancel': void rig.job?.cancel(); break;
        case 'advance': rig.timers.advance(Number(arg)); break;
        case 'settle': await flush(); await flush(); break;
        case 'state': await flush(); assert.equal(rigState(rig), arg, where); break;
        case 'outcome': await flush(); assert.equal(rig.outcome, arg, where); break;
        case 'close': rig.transport.drop(arg ? new Error(arg) : undefined); break;
        case 'nothing-sent': await flush(); assert.deepEqual(rig.transport.unread(), [], where); break;
        case 'fake-ack': rig.engine.fakeAck(); break;
        default: throw new Error(`unknown verb in ${where}`);
      }
    } else throw new Error(`bad ${where}`);
  }
}

const FIRMWARE: Record<string, string[]> = {
  Marlin: ['FIRMWARE_NAME:Marlin 2.1.2 (Jun 1 2023 12:00:00) SOURCE_CODE_URL:github.com/MarlinFirmware/Marlin PROTOCOL_VERSION:1.0 MACHINE_TYPE:Ender-3 EXTRUDER_COUNT:1', 'Cap:EMERGENCY_PARSER:1'],
  MarlinNoParser: ['FIRMWARE_NAME:Marlin 2.0.9.3 (Dec 1 2021) SOURCE_CODE_URL:github.com/MarlinFirmware/Marlin PROTOCOL_VERSION:1.0 MACHINE_TYPE:Ender-3 EXTRUDER_COUNT:1'],
  Prusa: ['FIRMWARE_NAME:Prusa-Firmware 3.13.0 based on Marlin FIRMWARE_URL:https://github.com/prusa3d/Prusa-Firmware PROTOCOL_VERSION:1.0 MACHINE_TYPE:Prusa i3 MK3S EXTRUDER_COUNT:1'],
  RRF: ['FIRMWARE_NAME: RepRapFirmware for Duet 3 MB6HC FIRMWARE_VERSION: 3.4.5 ELECTRONICS: Duet 3 MB6HC v1.01 FIRMWARE_DATE: 2022-11-30'],
  Klipper: ['FIRMWARE_NAME:Klipper FIRMWARE_VERSION:v0.12.0-85-gd785b396'],
};

/** Connects and answers the start-up dialogue (every line gets an ok; M115 gets the firmware's report first). */
async function ready(rig: Rig, firmware: string): Promise<void> {
  await rig.engine.connect({ transport: rig.transport, port: 'SCRIPTED', baudrate: 115200 });
  rig.transport.reply('ok');
  for (let i = 0; i < 20; i++) {
    await flush();
    const line = rig.transport.take();
    if (line === undefined) {
      if (rig.engine.linesInFlight === 0) break;
      rig.transport.reply('ok');
      continue;
    }
    if (line.includes('M115')) for (const l of FIRMWARE[firmware]) rig.transport.reply(l);
    rig.transport.reply('ok');
  }
  await flush();
  rig.transport.readIndex = rig.transport.written.length;
  assert.equal(rig.engine.state, 'OPERATIONAL');
  assert.equal(rig.engine.linesInFlight, 0);
}

export function transcript(name: string): string {
  return readFileSync(new URL(`../fixtures/transcripts/${name}`, import.meta.url), 'utf8');
}
