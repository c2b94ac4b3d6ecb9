// Power control (PSU Control compatible, docs/reference/plugins.md §1): switches the printer's supply by G-code, GPIO,
// shell commands or a device provider, reads the state back every sensePollingInterval (pushing it each time, as the
// plugin does), powers on before a connect, switches off when idle and cool, and refuses an off while printing or
// heating unless forced.
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { conflict, DomainError, ErrorCodes } from '../core/errors.ts';
import type { ConnectOptions, ConnectionSnapshot, TemperatureSnapshot } from '../printer/types.ts';
import type { PsuControlSettings } from './providers/settings.ts';
import { DeviceError, type PowerProvider } from './providers/provider.ts';
import { createProvider } from './providers/index.ts';
import type { PowerMqtt } from './providers/mqtt-topics.ts';
import { runShell } from './providers/system-command.ts';
import { gpioGet, gpioSet } from './providers/gpio-line.ts';

/** What power control needs of the printer (PrinterService satisfies it). */
export interface PowerPrinter {
  isOperational(): boolean;
  /** Printing or paused. */
  isBusy(): boolean;
  connection(): ConnectionSnapshot;
  temperatures(): TemperatureSnapshot;
  commands(lines: string[]): void;
  connect(opts: ConnectOptions): Promise<void>;
  disconnect(): Promise<void>;
  runScript(name: string, context: Record<string, unknown>): Promise<boolean>;
}

/** What power reads of the settings (a `ConfigSlice` of plugins, serial and printerProfiles satisfies it). */
export interface PowerConfig {
  plugins: { psucontrol: PsuControlSettings };
  serial: { port: string | null; baudrate: number | null };
  printerProfiles: { default: string | null };
}

export interface PowerServiceDeps {
  /** Its slice of the settings (`config.slice('plugins', 'serial', 'printerProfiles')`), read live: PSU Control's
   *  settings, and the saved port, baud rate and profile connectOnPowerOn connects to. */
  config: { get(): PowerConfig };
  printer: PowerPrinter;
  events: EventBus;
  logger: Logger;
  /** Sends a plugin message on the push channel (identifier psucontrol). */
  push: (data: { isPSUOn: boolean }) => void;
  mqtt?: PowerMqtt;
  /** Resolves once `port` is listed again (a board powered by the PSU enumerates after it boots), or after `ms`. */
  waitForPort?: (port: string, ms: number) => Promise<void>;
}

const OWNER = 'power';
/** How often the idle rule looks (PSU Control polls the temperatures every 5 s while waiting too). */
/** How long an upload to print waits, once switched on, for the printer to become operational. */
const UPLOAD_CONNECT_WAIT_MS = 60_000;
const IDLE_TICK_MS = 5000;

export type OffReason = 'api' | 'idle' | 'gcode' | 'error';

export class PowerService {
  private on = false;
  private known = false;
  private provider: PowerProvider | null = null;
  private providerKey = '';
  private pollTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private lastActive = Date.now();
  private stopped = false;
  /** An M81 sent during a job: off once the job has ended and the hotends are cool. */
  private offAfterJob = false;
  private lastPollError = '';

  constructor(private readonly deps: PowerServiceDeps) {}

  private settings(): PsuControlSettings {
    return this.deps.config.get().plugins.psucontrol;
  }

  async start(): Promise<void> {
    const ev = this.deps.events;
    // Pushed to every new client only once power control is set up: out of the box (G-code switching, internal
    // sensing) there is no device, and clients' message sequences stay as they were.
    ev.on(OWNER, 'ClientOpened', () => { if (this.configured()) this.deps.push({ isPSUOn: this.on }); });
    // M80/M81 as the link writes them (printer/link/link-hooks.ts turns them into PowerOn/PowerOff).
    ev.on(OWNER, 'PowerOn', () => this.pseudo(true));
    ev.on(OWNER, 'PowerOff', () => this.pseudo(false));
    ev.on(OWNER, 'PrintStarted', () => {
      if (this.settings().autoOn && !this.on) void this.turnOn().catch((err: unknown) => this.deps.logger.warn({ err }, 'power: autoOn at print start failed'));
    });
    ev.on(OWNER, 'Error', () => {
      if (this.settings().turnOffWhenError && this.on) void this.turnOff({ force: true, reason: 'error' }).catch(() => {});
    });
    // Not awaited: a device that does not answer must not hold up the server's start by its timeout.
    void this.poll().finally(() => this.schedulePoll());
    this.idleTimer = setInterval(() => this.idleTick(), IDLE_TICK_MS);
    this.idleTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.deps.events.removeOwner(OWNER);
    if (this.pollTimer) clearTimeout(this.pollTimer);
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.provider?.close?.();
    this.provider = null;
  }

  isOn(): boolean { return this.on; }

  /** Re-reads the state (getPSUState, GET). */
  async state(): Promise<boolean> {
    await this.poll();
    return this.on;
  }

  async turnOn(): Promise<void> {
    const s = this.settings();
    await this.switchTo(true);
    await sleep(100 + s.postOnDelay * 1000);
    await this.poll();
    const printer = this.deps.printer;
    if (s.connectOnPowerOn && !printer.isOperational() && printer.connection().state === 'Closed') {
      await this.connectAfterPower().catch((err: unknown) => this.deps.logger.warn({ err }, 'power: connect after power on failed'));
    }
    if (printer.isOperational()) await printer.runScript('psucontrol_post_on', {});
  }

  /** Refused (409) while printing or heating unless `force`. */
  async turnOff(opts: { force?: boolean; reason?: OffReason } = {}): Promise<void> {
    const printer = this.deps.printer;
    const busy = this.busyReason();
    if (busy !== null && !opts.force) {
      throw conflict(`The printer is ${busy}: switching the power off now would ruin it. Send the command again with "force": true (or ?force=true) to switch off anyway`);
    }
    const s = this.settings();
    if (printer.isOperational()) await printer.runScript('psucontrol_pre_off', {});
    const wasPrinting = printer.isBusy();
    if (wasPrinting) {
      // Told before the link drops, so the recovery journal records the cut power as the cause (src/recovery/).
      this.deps.events.emit('plugin_psucontrol_power_cut', { reason: opts.reason ?? 'api' });
    }
    // A print cut mid-way is over (its board may live on USB power and keep answering): the link closes, so the job
    // ends as interrupted and recovery can offer to resume it.
    if ((s.disconnectOnPowerOff || wasPrinting) && printer.connection().state !== 'Closed') await printer.disconnect();
    await this.switchTo(false);
    await sleep(100);
    await this.poll();
  }

  async toggle(force = false): Promise<void> {
    await this.poll();
    if (this.on) await this.turnOff({ force });
    else await this.turnOn();
  }

  /** Before a connect (autoOn): power on, give the board postOnDelay and the time to enumerate its port. */
  async beforeConnect(port: string | undefined): Promise<void> {
    const s = this.settings();
    if (!s.autoOn || this.on) return;
    await this.switchTo(true);
    await sleep(100 + s.postOnDelay * 1000);
    if (port && port !== 'AUTO' && port !== 'VIRTUAL') await this.deps.waitForPort?.(port, 15_000);
    await this.poll();
  }

  /**
   * turnOnWhenApiUploadPrint (plugins.md §1.3): an upload asking to print switches the supply on first, gives the
   * board postOnDelay, connects (with the configured port, waiting for it to appear) and waits for Operational, so
   * the print the upload asked for can start. Nothing when the setting is off; errors are the device's (502).
   */
  async beforeUploadPrint(): Promise<void> {
    const s = this.settings();
    if (!s.turnOnWhenApiUploadPrint) return;
    await this.poll();
    if (!this.on) {
      await this.switchTo(true);
      await sleep(100 + s.postOnDelay * 1000);
      await this.poll();
    }
    const printer = this.deps.printer;
    if (printer.isOperational()) return;
    if (printer.connection().state === 'Closed') await this.connectAfterPower();
    // The board answers its first M105/M115 within the connection timeouts; the upload waits for it, bounded.
    const until = Date.now() + UPLOAD_CONNECT_WAIT_MS;
    while (!printer.isOperational() && Date.now() < until && printer.connection().state !== 'Closed') await sleep(100);
    if (!printer.isOperational()) this.deps.logger.warn('power: switched on for an upload to print, but the printer did not become operational; the file is stored, not printed');
  }

  private async connectAfterPower(): Promise<void> {
    const c = this.deps.config.get();
    const opts: ConnectOptions = { port: c.serial.port ?? undefined, baudrate: c.serial.baudrate ?? undefined, profileId: c.printerProfiles.default ?? undefined };
    if (opts.port && opts.port !== 'AUTO' && opts.port !== 'VIRTUAL') await this.deps.waitForPort?.(opts.port, 15_000);
    await this.deps.printer.connect(opts);
  }

  /** Why an off would hurt now, or null. */
  busyReason(): string | null {
    if (this.deps.printer.isBusy()) return 'printing';
    const t = this.deps.printer.temperatures();
    for (const [k, v] of Object.entries(t)) if (v.target !== null && v.target > 0) return `heating (${k} to ${v.target} °C)`;
    return null;
  }

  private device(): PowerProvider {
    const s = this.settings();
    const key = JSON.stringify(s.gantry);
    if (this.provider === null || key !== this.providerKey) {
      this.provider?.close?.();
      this.provider = createProvider(s.gantry, this.deps.mqtt);
      this.providerKey = key;
    }
    if (this.provider === null) {
      throw new DomainError(ErrorCodes.CONFLICT, 'No power device is configured: set plugins.psucontrol.gantry.kind (tasmota, shelly1, shelly2, kasa, homeassistant, mqtt, http, system)');
    }
    return this.provider;
  }

  private async switchTo(on: boolean): Promise<void> {
    const s = this.settings();
    const timeout = s.gantry.timeout;
    switch (s.switchingMethod) {
      case 'GCODE':
        if (!this.deps.printer.isOperational()) throw conflict(`The power is switched by G-code (${on ? s.onGCodeCommand : s.offGCodeCommand}), which needs a connected printer`);
        this.deps.printer.commands([on ? s.onGCodeCommand : s.offGCodeCommand]);
        break;
      case 'GPIO':
        await gpioSet(s.GPIODevice, s.onoffGPIOPin, on, s.invertonoffGPIOPin, timeout);
        break;
      case 'SYSTEM': {
        const cmd = on ? s.onSysCommand : s.offSysCommand;
        if (cmd.trim() === '') throw conflict(`plugins.psucontrol.${on ? 'onSysCommand' : 'offSysCommand'} is not set`);
        const code = await runShell(`The power command \`${cmd}\``, cmd, timeout);
        if (code !== 0) throw new DeviceError(`The power command \`${cmd}\` exited with ${code}`);
        break;
      }
      case 'PLUGIN':
        await this.device().setPower(on);
        break;
    }
    if (s.sensingMethod === 'INTERNAL') this.setState(on);
    if (on) this.lastActive = Date.now();
  }

  /** Reads the state as sensingMethod says, tells a change, pushes it (every poll, like the plugin). */
  private async poll(): Promise<void> {
    const s = this.settings();
    let on = this.on;
    try {
      switch (s.sensingMethod) {
        case 'INTERNAL': break;
        case 'GPIO': on = await gpioGet(s.GPIODevice, s.senseGPIOPin, s.invertsenseGPIOPin, s.senseGPIOPinPUD, s.gantry.timeout); break;
        case 'SYSTEM': {
          if (s.senseSystemCommand.trim() === '') break;
          on = (await runShell('The sensing command', s.senseSystemCommand, s.gantry.timeout)) === 0;
          break;
        }
        case 'PLUGIN': on = await this.device().readState(); break;
      }
      this.lastPollError = '';
    } catch (err) {
      // As the plugin: a sensing failure reads as off; logged once per distinct failure.
      on = false;
      const text = err instanceof Error ? err.message : String(err);
      if (text !== this.lastPollError) this.deps.logger.warn({ err: text }, 'power: reading the state failed');
      this.lastPollError = text;
    }
    const before = this.on;
    this.setState(on);
    // As the plugin, every poll of a device is pushed (OctoApp and OctoPod read isPSUOn from each); without one, changes only.
    if (this.configured() || before !== this.on) this.deps.push({ isPSUOn: this.on });
  }

  /** Whether the user set power control up (anything but PSU Control's defaults: G-code switching, internal sensing). */
  configured(): boolean {
    const s = this.settings();
    return s.switchingMethod !== 'GCODE' || s.sensingMethod !== 'INTERNAL';
  }

  private setState(on: boolean): void {
    const changed = on !== this.on || !this.known;
    this.known = true;
    if (on !== this.on) {
      this.on = on;
      this.lastActive = Date.now();
    }
    if (changed) this.deps.events.emit('plugin_psucontrol_psu_state_changed', { isPSUOn: this.on });
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    // Nothing to read back out of the box: look again for a set-up device once a minute, so an idle server sleeps.
    const ms = this.configured() ? Math.max(100, this.settings().sensePollingInterval * 1000) : 60_000;
    this.pollTimer = setTimeout(() => { void this.poll().finally(() => this.schedulePoll()); }, ms);
    this.pollTimer.unref();
  }

  /** M80/M81 written to the printer: with pseudo on/off (not GCODE switching) they switch the supply. */
  private pseudo(on: boolean): void {
    const s = this.settings();
    if (!s.enablePseudoOnOff || s.switchingMethod === 'GCODE') return;
    if (on) {
      this.offAfterJob = false;
      if (!this.on) void this.turnOn().catch((err: unknown) => this.deps.logger.warn({ err }, 'power: M80 could not switch on'));
    } else {
      // Never off while printing or heating: an M81 at the end of a file waits for the job to end and the hotends to cool.
      this.offAfterJob = true;
      this.idleTick();
    }
  }

  private hotendsCool(limit: number): boolean {
    for (const [k, v] of Object.entries(this.deps.printer.temperatures())) {
      if (!k.startsWith('tool')) continue;
      if (v.actual !== null && v.actual > limit) return false;
    }
    return true;
  }

  /** The idle rule (and a pending M81): off once no job runs, nothing heats and every hotend is at or below the limit. */
  private idleTick(): void {
    const s = this.settings();
    if (!this.on || (!s.powerOffWhenIdle && !this.offAfterJob)) return;
    const now = Date.now();
    if (this.busyReason() !== null || !this.hotendsCool(s.idleTimeoutWaitTemp)) {
      this.lastActive = now;
      return;
    }
    const due = this.offAfterJob || now - this.lastActive >= s.idleTimeout * 60_000;
    if (!due) return;
    const reason: OffReason = this.offAfterJob ? 'gcode' : 'idle';
    this.offAfterJob = false;
    this.deps.logger.info({ reason }, 'power: switching off');
    void this.turnOff({ reason }).catch((err: unknown) => this.deps.logger.warn({ err }, 'power: switching off failed'));
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
