// Reconnecting by itself when the port of a connection that dropped comes back (the same device), and telling the
// journal whether the printer kept running through it (continue the print) or reset (the offer stays).
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { TransportFactory } from '../protocol/line-transport.ts';
import type { ConnectOptions, ConnectionSnapshot } from '../printer/types.ts';
import { probeLineCounter, type ProbeResult } from './line-probe.ts';

export interface ReconnectSettings {
  autoReconnect: boolean;
  reconnectDelay: number;
  reconnectMaxDelay: number;
  reconnectGiveUp: number;
  probeTimeout: number;
}

export interface AutoReconnectDeps {
  printer: { connect(opts: ConnectOptions): Promise<void>; isOperational(): boolean; connection(): ConnectionSnapshot };
  ports: { listPorts(): Promise<string[]>; transports(): Promise<TransportFactory> };
  journal: {
    awaitsReconnect(): boolean;
    noteReconnect(outcome: 'reset' | 'unsure', reason: string): void;
    continueAfterReconnect(line: number): Promise<{ continued: boolean; reason: string }>;
  };
  events: EventBus;
  logger: Logger;
  /** Its slice of the settings (`config.slice('recovery')`), read live. */
  config: { get(): { recovery: ReconnectSettings } };
  /** Where udev keeps stable names for USB serial devices. */
  byIdDir?: string;
}

/** The connection to get back: the port it was open on (and that device's stable by-id name, when it has one). */
interface Target {
  port: string;
  byId: string | null;
  baudrate: number;
  profileId: string;
  /** Settles once the by-id name was looked for. */
  resolved: Promise<void>;
}

const OWNER = 'auto-reconnect';

export class AutoReconnect {
  private target: Target | null = null;
  /** The running attempt loop; a new loop or a stop replaces it, and the old one ends at its next look. */
  private loop = 0;
  private attempting = false;
  private wake: (() => void) | null = null;

  constructor(private readonly deps: AutoReconnectDeps) {}

  async start(): Promise<void> {
    const ev = this.deps.events;
    ev.on(OWNER, 'Connected', (p) => {
      if (this.attempting) return;
      this.cancel();
      void this.remember(p.port, p.baudrate);
    });
    // A connect asked for elsewhere (another port, perhaps) replaces whatever was being waited for.
    ev.on(OWNER, 'Connecting', () => {
      if (this.attempting) return;
      this.cancel();
      this.target = null;
    });
    // Asked for (the API, a script, shutdown): never undone by reconnecting.
    ev.on(OWNER, 'Disconnecting', () => {
      if (this.attempting) return;
      this.cancel();
      this.target = null;
    });
    ev.on(OWNER, 'Error', (p) => {
      if (p.reason !== 'connection' || this.attempting || !this.target || !this.deps.config.get().recovery.autoReconnect) return;
      void this.run(this.target);
    });
    const c = this.deps.printer.connection();
    if (this.deps.printer.isOperational() && c.port && c.baudrate) await this.remember(c.port, c.baudrate);
  }

  async stop(): Promise<void> {
    this.deps.events.removeOwner(OWNER);
    this.cancel();
    this.target = null;
  }

  /** The device a dropped connection would be waited for by: its by-id name, else its port (null: none). */
  watchedDevice(): string | null {
    return this.target ? (this.target.byId ?? this.target.port) : null;
  }

  private cancel(): void {
    this.loop++;
    this.wake?.();
  }

  private async remember(port: string, baudrate: number): Promise<void> {
    const profileId = this.deps.printer.connection().printerProfile;
    // Known at once (a port may go right after connecting); its by-id name follows.
    const target: Target = { port, byId: null, baudrate, profileId, resolved: Promise.resolve() };
    this.target = target;
    target.resolved = this.byIdName(port).then((name) => { target.byId = name; });
    await target.resolved;
  }

  /** The /dev/serial/by-id name of the device `port` is (null for ptys, VIRTUAL, and systems without udev). */
  private async byIdName(port: string): Promise<string | null> {
    const dir = this.deps.byIdDir ?? '/dev/serial/by-id';
    const real = await realpath(port).catch(() => null);
    if (!real) return null;
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if ((await realpath(join(dir, name)).catch(() => null)) === real) return join(dir, name);
    }
    return null;
  }

  /**
   * Where the device is now, if it is back: by its by-id name when it had one (the same device, even under another
   * ttyUSB number, and never another device that took its old number), else the port as configured. Only a port
   * the port list offers is opened.
   */
  private async locate(t: Target): Promise<string | null> {
    const listed = await this.deps.ports.listPorts().catch(() => [] as string[]);
    if (t.byId) {
      const real = await realpath(t.byId).catch(() => null);
      if (!real) return null;
      return listed.includes(t.byId) ? t.byId : listed.includes(real) ? real : null;
    }
    if (!listed.includes(t.port)) return null;
    if (t.port === 'VIRTUAL') return t.port;
    return (await stat(t.port).then(() => true, () => false)) ? t.port : null;
  }

  private async run(target: Target): Promise<void> {
    const loop = ++this.loop;
    const s = this.deps.config.get().recovery;
    // Monotonic: a jump of the wall clock (NTP setting a board's time after boot) must not end the wait early or never.
    const began = performance.now();
    let delay = s.reconnectDelay * 1000;
    await target.resolved;
    this.deps.logger.info({ port: target.port, byId: target.byId }, 'auto-reconnect: waiting for the port to come back');
    while (loop === this.loop) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        timer.unref();
        this.wake = () => { clearTimeout(timer); resolve(); };
      });
      this.wake = null;
      if (loop !== this.loop || this.target !== target || this.deps.printer.isOperational() || !this.deps.config.get().recovery.autoReconnect) return;
      const path = await this.locate(target);
      if (path !== null && loop === this.loop && (await this.attempt(target, path))) return;
      delay = Math.min(delay * 2, s.reconnectMaxDelay * 1000);
      if (s.reconnectGiveUp > 0 && performance.now() - began > s.reconnectGiveUp * 1000) {
        this.deps.logger.warn({ port: target.port }, 'auto-reconnect: the port did not come back; giving up');
        return;
      }
    }
  }

  /** One try: ask the printer whether it reset (when a print waits on it), connect, then continue or keep the offer. */
  private async attempt(target: Target, path: string): Promise<boolean> {
    this.attempting = true;
    try {
      let probe: ProbeResult | null = null;
      if (this.deps.journal.awaitsReconnect()) {
        const open = await this.deps.ports.transports();
        probe = await probeLineCounter(open(path, target.baudrate), this.deps.config.get().recovery.probeTimeout * 1000).catch(() => null);
        if (probe === null) return false; // listed but not openable yet (udev still setting it up)
      }
      const operational = this.waitOperational(15_000);
      // The port list may have changed since it was looked at (the device went again): a miss, tried again later.
      const connecting = this.deps.printer.connect({ port: path, baudrate: target.baudrate, profileId: target.profileId });
      if (!(await connecting.then(() => operational, () => false))) return false;
      this.deps.logger.info({ port: path, probe }, 'auto-reconnect: connected again');
      if (probe?.kind === 'counter') {
        const r = await this.deps.journal.continueAfterReconnect(probe.line);
        this.deps.logger.info(r, 'auto-reconnect: after the reconnect');
      } else if (probe?.kind === 'reset') {
        this.deps.journal.noteReconnect('reset', 'The printer restarted when the port came back (it said `start`); resume from the offer');
      } else if (probe) {
        this.deps.journal.noteReconnect('unsure', 'The printer did not tell its line counter after the reconnect, so where it stopped is not known for sure');
      }
      return true;
    } finally {
      this.attempting = false;
    }
  }

  /** Resolves true once the link is Operational, false on an error or after `ms`. */
  private waitOperational(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const owner = `${OWNER}-wait`;
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.deps.events.removeOwner(owner);
        resolve(ok);
      };
      const timer = setTimeout(() => done(this.deps.printer.isOperational()), ms);
      timer.unref();
      this.deps.events.on(owner, 'Connected', () => done(true));
      this.deps.events.on(owner, 'Error', () => done(false));
    });
  }
}
