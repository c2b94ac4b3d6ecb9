// Event subscriptions (config `events.subscriptions`): run a system command or send G-code when an event fires, with
// OctoPrint's placeholders. System commands run as child processes (never blocking the loop), bounded and timed out.
import { spawn, type ChildProcess } from 'node:child_process';
import type { ConfigSlice } from '../config/config-slice.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { PAYLOADLESS_EVENTS } from '../core/events.ts';
import { formatCommand, pyIsoNow, pyRepr, UnknownPlaceholderError } from './placeholders.ts';
import { splitLines } from '../gcode/line-breaks.ts';

/** What placeholders read besides the payload (printer and job services; absent parts give the documented defaults). */
export interface EventContext {
  currentZ(): number | null;
  selectedFile(): { name: string; path: string; origin: string } | undefined;
  /** Completion in percent, or null without a job. */
  progress(): number | null;
}

/** Where `gcode` subscriptions send their lines (the printer service satisfies it). */
export interface GcodeSink {
  isOperational(): boolean;
  commands(lines: string[]): void;
}

export interface Subscription {
  events: string[];
  commands: string[];
  type: 'system' | 'gcode';
  debug: boolean;
  shell: boolean;
  name?: string;
}

export interface EventSubscriptionsDeps {
  config: ConfigSlice<'events'>;
  events: EventBus;
  logger: Logger;
  context?: EventContext;
  gcode?: GcodeSink;
}

const OWNER = 'event-subscriptions';
/**
 * At stop, commands run for `Shutdown` (the event exists for them) may finish for this long, within their own timeout;
 * everything else is killed at once.
 */
export const SHUTDOWN_GRACE_MS = 5000;
const MAX_RUNNING = 4;
const MAX_QUEUED = 100;
const MAX_OUTPUT = 16 * 1024;

const asList = (v: unknown): string[] | undefined => {
  if (typeof v === 'string') return v ? [v] : undefined;
  if (Array.isArray(v) && v.length && v.every((x) => typeof x === 'string')) return v as string[];
  return undefined;
};

/** Why a configured entry cannot be used (config.yaml is not validated per entry), or undefined when it can. */
function entryProblem(raw: unknown): string | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return 'not a mapping';
  const e = raw as Record<string, unknown>;
  if (!asList(e.event)) return 'no event (a name or a list of names)';
  if (!asList(e.command)) return 'no command (a line or a list of lines)';
  if (e.type !== 'system' && e.type !== 'gcode') return 'type is not "system" or "gcode"';
  for (const k of ['enabled', 'debug', 'shell'] as const) {
    if (e[k] !== undefined && typeof e[k] !== 'boolean') return `${k} is not true or false`;
  }
  if (e.name !== undefined && typeof e.name !== 'string') return 'name is not a string';
  return undefined;
}

/** The entry as the user wrote it, shortened, so the log line points at it. */
function describeEntry(raw: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(raw) ?? String(raw);
  } catch {
    text = String(raw);
  }
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** Splits a command line into words for `shell: false` (quotes group words; no expansion of any kind). */
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:\\.|[^"\\])*)"|'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2] ?? m[3]);
  return out;
}

export class EventSubscriptions {
  private byEvent = new Map<string, Subscription[]>();
  /** Running commands and the event they run for. */
  private running = new Map<ChildProcess, string>();
  private queue: Array<{ event: string; job: () => Promise<void> }> = [];
  private active = 0;
  private offConfig: (() => void) | undefined;
  private stopped = false;
  /** Stopping: only `Shutdown` work may still start and run. */
  private draining = false;
  private idle: Array<() => void> = [];

  constructor(private readonly deps: EventSubscriptionsDeps) {}

  async start(): Promise<void> {
    this.stopped = this.draining = false;
    this.load();
    this.offConfig = this.deps.config.onChange((next, prev) => {
      if (next.events !== prev.events) this.load();
    });
    this.deps.events.onAny(OWNER, (name, payload) => this.onEvent(name, payload));
  }

  async stop(): Promise<void> {
    this.deps.events.removeOwner(OWNER);
    this.offConfig?.();
    this.draining = true;
    this.queue = this.queue.filter((q) => q.event === 'Shutdown');
    for (const [p, event] of this.running) if (event !== 'Shutdown') killTree(p);
    if (this.active > 0) {
      const graceMs = Math.min(SHUTDOWN_GRACE_MS, this.deps.config.get().events.commandTimeout * 1000);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((r) => this.idle.push(r)),
        new Promise<void>((r) => { timer = setTimeout(r, graceMs); }),
      ]);
      clearTimeout(timer);
    }
    this.stopped = true;
    this.queue = [];
    for (const [p, event] of this.running) {
      this.deps.logger.warn({ event, pid: p.pid }, 'event command still running at shutdown; killed');
      killTree(p);
    }
    this.running.clear();
  }

  /** The subscriptions in effect (after validation), for diagnostics and tests. */
  subscriptions(): Subscription[] {
    return [...new Set([...this.byEvent.values()].flat())];
  }

  private load(): void {
    const { config, logger } = this.deps;
    this.byEvent.clear();
    const section = config.get().events;
    if (!section.enabled) return;
    section.subscriptions.forEach((raw, i) => {
      const problem = entryProblem(raw);
      if (problem) {
        logger.warn({ index: i, entry: describeEntry(raw), problem },
          `event subscription #${i} ${describeEntry(raw)} ignored: ${problem}`);
        return;
      }
      const entry = raw as Record<string, unknown>;
      if (entry.enabled === false) return;
      const events = asList(entry.event)!;
      const commands = asList(entry.command)!;
      const type = entry.type as Subscription['type'];
      if (type === 'system' && typeof entry.shell !== 'boolean') {
        logger.warn({ index: i, event: events },
          'event subscription without "shell": running through the shell for now; this default is deprecated, set "shell" explicitly');
      }
      const sub: Subscription = {
        events, commands, type, debug: entry.debug === true, shell: entry.shell !== false,
        name: typeof entry.name === 'string' ? entry.name : undefined,
      };
      for (const e of events) this.byEvent.set(e, [...(this.byEvent.get(e) ?? []), sub]);
    });
  }

  private placeholders(name: string, payload: unknown): Record<string, unknown> {
    const ctx = this.deps.context;
    const file = ctx?.selectedFile();
    const z = ctx?.currentZ() ?? null;
    const progress = ctx?.progress() ?? null;
    // Events documented without a payload are emitted with `{}`; commands see no payload (`{__data}` is None).
    const data = !PAYLOADLESS_EVENTS.has(name) && payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : undefined;
    let json: string;
    try {
      json = data ? JSON.stringify(data) : '{}';
    } catch {
      json = '';
    }
    const values: Record<string, unknown> = {
      __eventname: name,
      __now: pyIsoNow(new Date()),
      __currentZ: z === null ? '-1' : String(z),
      __filename: file?.name ?? 'NO FILE',
      __filepath: file?.path ?? 'NO PATH',
      __progress: progress === null ? '0' : String(Math.round(progress)),
      __data: pyRepr(data ?? null),
      __json: json,
    };
    if (file) values.__fileorigin = file.origin;
    return data ? { ...values, ...data } : values;
  }

  private onEvent(name: string, payload: unknown): void {
    const subs = this.byEvent.get(name);
    if (!subs || this.stopped) return;
    const values = this.placeholders(name, payload);
    for (const sub of subs) {
      const lines: string[] = [];
      for (const template of sub.commands) {
        try {
          lines.push(formatCommand(template, values));
        } catch (err) {
          const why = err instanceof UnknownPlaceholderError ? `unknown placeholder {${err.placeholder}}` : (err as Error).message;
          this.deps.logger.warn({ event: name, command: template, why }, 'event subscription command not run');
          if (sub.type === 'system') break;
        }
      }
      if (!lines.length) continue;
      if (sub.debug) this.deps.logger.info({ event: name, type: sub.type, commands: lines }, 'event subscription triggered');
      if (sub.type === 'gcode') this.sendGcode(name, lines);
      else this.enqueue(name, () => this.runSystem(name, sub, lines));
    }
  }

  private sendGcode(event: string, lines: string[]): void {
    const sink = this.deps.gcode;
    const split = lines.flatMap(splitLines).map((l) => l.trim()).filter(Boolean);
    if (!sink || !sink.isOperational()) {
      this.deps.logger.debug({ event, lines: split }, 'gcode event subscription dropped: printer not connected');
      return;
    }
    try {
      sink.commands(split);
    } catch (err) {
      this.deps.logger.warn({ err, event }, 'gcode event subscription could not be sent');
    }
  }

  private enqueue(event: string, job: () => Promise<void>): void {
    if (this.queue.length >= MAX_QUEUED) {
      this.deps.logger.warn('too many event commands waiting; one dropped');
      return;
    }
    this.queue.push({ event, job });
    this.pump();
  }

  private pump(): void {
    while (this.active < MAX_RUNNING && this.queue.length && !this.stopped) {
      const { job } = this.queue.shift()!;
      this.active++;
      job().finally(() => {
        this.active--;
        this.pump();
        if (this.active === 0 && this.queue.length === 0) for (const r of this.idle.splice(0)) r();
      });
    }
  }

  /** Whether work for this event may still go on (while stopping, only Shutdown's). */
  private mayRun(event: string): boolean {
    return !this.stopped && (!this.draining || event === 'Shutdown');
  }

  /** A list runs in order; a failing command stops the rest (as OctoPrint does). */
  private async runSystem(event: string, sub: Subscription, lines: string[]): Promise<void> {
    for (const line of lines) {
      if (!this.mayRun(event)) return;
      const code = await this.runOne(event, sub, line);
      if (code !== 0) return;
    }
  }

  private runOne(event: string, sub: Subscription, line: string): Promise<number> {
    const { logger } = this.deps;
    const timeoutMs = this.deps.config.get().events.commandTimeout * 1000;
    return new Promise((resolve) => {
      let child: ChildProcess;
      try {
        if (sub.shell) child = spawn('/bin/sh', ['-c', line], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        else {
          const [cmd, ...args] = splitArgs(line);
          child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        }
      } catch (err) {
        logger.warn({ err, event, command: sub.debug ? line : undefined }, 'event command could not be started');
        resolve(-1);
        return;
      }
      this.running.set(child, event);
      let out = '';
      const collect = (b: Buffer): void => { if (out.length < MAX_OUTPUT) out += b.toString('utf8', 0, Math.min(b.length, MAX_OUTPUT - out.length)); };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
      let timedOut = false;
      const timer = setTimeout(() => { timedOut = true; killTree(child); }, timeoutMs);
      timer.unref();
      let finished = false;
      const done = (code: number, err?: Error): void => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        this.running.delete(child);
        const info = { event, code, timedOut, output: out.trimEnd() || undefined, command: sub.debug ? line : undefined, err };
        if (code === 0) logger.info(info, 'event command finished');
        else logger.warn(info, timedOut ? 'event command timed out and was killed' : 'event command failed');
        resolve(code);
      };
      child.once('error', (err) => done(-1, err));
      child.once('close', (code, signal) => done(code ?? (signal ? -1 : 0)));
    });
  }
}

/** The command runs in its own process group (detached) so a shell's children die with it. */
function killTree(p: ChildProcess): void {
  try {
    if (p.pid) process.kill(-p.pid, 'SIGKILL');
  } catch {
    p.kill('SIGKILL');
  }
}
