// The simulated Marlin: line intake (line numbers, checksums, resend requests, RX buffer), command queue, ok flow, faults.
import { commandCode, stripComment, xorChecksum, param } from '../gcode/line.ts';
import { defaultVirtualPrinterOptions, type VirtualPrinterOptions } from './options.ts';
import { Scheduler } from './scheduler.ts';
import { ThermalModel } from './thermal-model.ts';
import { Planner } from './planner.ts';
import { SdCard, MemorySdStorage, type SdStorage } from './sd-card.ts';
import { marlinMotionDefaults, type Command, type Firmware, type HandlerResult, type HandlerTable, type MachineState } from './handlers/registry.ts';
import { motionHandlers } from './handlers/motion.ts';
import { temperatureHandlers } from './handlers/temperature.ts';
import { sdHandlers } from './handlers/sd.ts';
import { infoHandlers } from './handlers/info.ts';
import { settingsHandlers } from './handlers/settings.ts';
import { levelingHandlers } from './handlers/leveling.ts';
import { debugCommands, type DebugControl } from './handlers/debug.ts';
import { runSdPrint } from './sd-print.ts';

export const HANDLERS: HandlerTable = { ...motionHandlers, ...temperatureHandlers, ...sdHandlers, ...infoHandlers, ...settingsHandlers, ...levelingHandlers };

/** Commands Marlin's emergency parser acts on as soon as the bytes arrive, before the queue. */
const EMERGENCY = new Set(['M108', 'M112', 'M410']);

interface Queued {
  cmd: Command;
}

export class VirtualPrinter implements Firmware {
  readonly opts: VirtualPrinterOptions;
  readonly scheduler: Scheduler;
  readonly thermal: ThermalModel;
  readonly planner: Planner;
  readonly sd: SdCard | null;
  readonly handlers = HANDLERS;
  readonly state: MachineState = {
    motion: marlinMotionDefaults(),
    pos: { x: 0, y: 0, z: 0, e: 0 },
    absolute: true,
    absoluteE: true,
    feedrate: 3000,
    feedFactor: 100,
    flowFactor: 100,
    tool: 0,
    abortWait: false,
    selected: null,
    sdJob: null,
    sdWrite: null,
    stopTempReport: null,
    stopSdReport: null,
  };

  private output: (line: string) => void = () => {};
  private disconnected: (err: Error) => void = () => {};
  private rx: string[] = [];
  private rxBytes = 0;
  private queue: Queued[] = [];
  private executing = false;
  private lastN = 0;
  private killed = false;
  private stopped = false;
  private dropNextLine = false;
  /** Raised by a reset: a command that was running when the board rebooted never answers. */
  private generation = 0;
  /** Counters for fault injection. */
  private received = 0;
  private numbered = 0;
  private oks = 0;

  constructor(options: Partial<VirtualPrinterOptions> = {}, sdStorage?: SdStorage) {
    this.opts = { ...defaultVirtualPrinterOptions(), ...options };
    this.scheduler = new Scheduler(this.opts.timeScale);
    this.thermal = new ThermalModel({
      tools: this.opts.sharedNozzle ? 1 : this.opts.numExtruders,
      bed: this.opts.hasBed,
      chamber: this.opts.hasChamber,
      ambient: this.opts.ambientTemperature,
    }, this.opts.timeScale);
    this.planner = new Planner(Math.max(1, this.opts.commandBuffer), this.scheduler);
    this.sd = this.opts.sdCard ? new SdCard(sdStorage ?? new MemorySdStorage()) : null;
  }

  /** Where replies go (one consumer: the loopback transport or a test). */
  onOutput(fn: (line: string) => void): void {
    this.output = fn;
  }

  /** Called once when the simulated device vanishes (fault injection). */
  onDisconnect(fn: (err: Error) => void): void {
    this.disconnected = fn;
  }

  /** Power-on: the boot banner, as a board prints after the port opened and reset it. */
  boot(): void {
    for (const l of this.opts.bootLines) this.send(l);
    if (this.sd?.ready) this.send('echo:SD card ok');
  }

  get isKilled(): boolean {
    return this.killed;
  }

  send(line: string): void {
    if (this.stopped) return;
    this.output(line);
  }

  /** One line from the host, without its newline. */
  receive(raw: string): void {
    if (this.stopped || this.killed) return;
    this.received++;
    if (this.opts.disconnectAfterLines > 0 && this.received >= this.opts.disconnectAfterLines) {
      this.vanish(new Error('virtual printer disconnected (fault injection)'));
      return;
    }
    if (this.dropNextLine) {
      this.dropNextLine = false;
      return;
    }
    const code = commandCode(commandPart(raw));
    if (code !== null && EMERGENCY.has(code)) {
      void this.execute({ code, text: stripComment(commandPart(raw)) }, 'serial');
      if (this.killed) return;
    }
    // A full receive buffer loses bytes on a real board; the host then sees a line-number error.
    if (this.rxBytes + raw.length + 1 > this.opts.rxBuffer && this.rx.length > 0) return;
    this.rx.push(raw);
    this.rxBytes += raw.length + 1;
    this.pump();
  }

  /** Moves received lines into the command queue while it has room (Marlin's get_serial_commands). */
  private pump(): void {
    while (this.rx.length > 0 && this.queue.length < this.opts.bufsize && !this.killed) {
      const raw = this.rx.shift()!;
      this.rxBytes -= raw.length + 1;
      this.intake(raw.trim());
    }
    if (!this.executing && this.queue.length > 0) void this.executeQueue();
  }

  private intake(line: string): void {
    if (line === '') return;
    if (line.startsWith('!!DEBUG:')) return this.debug(line.slice(8));
    let text = line;
    if (line[0] === 'N' || line[0] === 'n') {
      const sp = line.indexOf(' ');
      const n = parseInt(line.slice(1, sp === -1 ? undefined : sp), 10);
      const star = line.lastIndexOf('*');
      this.numbered++;
      if (this.opts.corruptEveryN > 0 && this.numbered % this.opts.corruptEveryN === 0) return this.lineError('checksum mismatch');
      if (star === -1) return this.lineError('No Checksum with line number');
      if (xorChecksum(line.slice(0, star)) !== parseInt(line.slice(star + 1), 10)) return this.lineError('checksum mismatch');
      text = sp === -1 || sp > star ? '' : line.slice(sp + 1, star).trim();
      if (commandCode(text) === 'M110') {
        const p = param(text, 'N');
        this.lastN = p !== null && !Number.isNaN(p) ? p : n;
      } else if (n !== this.lastN + 1) {
        return this.lineError('Line Number is not Last Line Number+1');
      } else {
        this.lastN = n;
      }
    } else if (line.includes('*')) {
      return this.lineError('No Line Number with checksum');
    } else if (this.opts.forceChecksum) {
      return this.lineError('Missing checksum');
    }
    text = stripComment(text);
    if (text === '') {
      this.queue.push({ cmd: { code: '', text: '' } });
      return;
    }
    this.queue.push({ cmd: { code: commandCode(text) ?? text.split(' ')[0].toUpperCase(), text } });
  }

  /** Marlin's gcode_line_error: report, flush the receive buffer, ask for the next expected line. */
  private lineError(why: string): void {
    this.send(`Error:${why}, Last Line: ${this.lastN}`);
    this.rx = [];
    this.rxBytes = 0;
    this.send(`Resend: ${this.lastN + 1}`);
    if (this.opts.okAfterResend) this.sendOk();
  }

  private async executeQueue(): Promise<void> {
    this.executing = true;
    const gen = this.generation;
    try {
      while (this.queue.length > 0 && !this.killed && !this.stopped) {
        const { cmd } = this.queue[0];
        let result: HandlerResult = undefined;
        const w = this.state.sdWrite;
        if (w && cmd.code !== 'M29') {
          // While uploading, every line is file content, acknowledged but not run.
          if (cmd.text) w.lines.push(cmd.text);
        } else if (cmd.text) {
          result = await this.execute(cmd, 'serial');
        }
        if (gen !== this.generation) return;
        this.queue.shift();
        if (this.killed || this.stopped) return;
        if (!result?.noOk) this.sendOk(result?.okSuffix);
        this.pump();
      }
    } finally {
      if (gen === this.generation) this.executing = false;
    }
  }

  /**
   * The board reboots with the port open (watchdog, brown-out, reset button): everything received and planned is
   * lost, heaters are off, the line counter starts again, and it greets with its boot banner (`start`).
   */
  reset(): void {
    if (this.stopped) return;
    this.generation++;
    this.executing = false;
    this.rx = [];
    this.rxBytes = 0;
    this.queue = [];
    this.lastN = 0;
    this.killed = false;
    this.planner.clear();
    for (const h of this.thermal.all()) h.target = 0;
    Object.assign(this.state.pos, { x: 0, y: 0, z: 0, e: 0 });
    this.state.absolute = this.state.absoluteE = true;
    this.boot();
  }

  private sendOk(suffix?: string): void {
    this.oks++;
    if (this.opts.dropOkEveryN > 0 && this.oks % this.opts.dropOkEveryN === 0) return;
    if (suffix !== undefined) {
      this.send(`ok${suffix}`);
      return;
    }
    if (this.opts.advancedOk) {
      const freeQueue = Math.max(0, this.opts.bufsize - this.queue.length);
      this.send(`ok N${this.lastN} P${this.planner.free} B${freeQueue}`);
      return;
    }
    this.send('ok');
  }

  /** Runs a command through its handler; long ones send busy keep-alives. */
  async execute(cmd: Command, source: 'serial' | 'sd'): Promise<HandlerResult> {
    const handler = this.handlers[cmd.code];
    if (!handler) {
      if (source === 'serial') this.send(`echo:Unknown command: "${cmd.text}"`);
      return;
    }
    const pending = handler.run(this, cmd, source);
    if (!(pending instanceof Promise)) return pending;
    let stopBusy: (() => void) | null = null;
    if (handler.keepAlive !== false && source === 'serial' && this.opts.busyInterval > 0) {
      stopBusy = this.scheduler.every(this.opts.busyInterval * 1000, () => this.send('echo:busy: processing'));
    }
    try {
      return await pending;
    } finally {
      stopBusy?.();
    }
  }

  temperatureReport(): string {
    this.thermal.update();
    const f = (h: { actual: number; target: number }) => `${h.actual.toFixed(2)} /${h.target.toFixed(2)}`;
    const tools = this.thermal.tools;
    let s = ` T:${f(tools[Math.min(this.state.tool, tools.length - 1)])}`;
    if (tools.length > 1) tools.forEach((h, i) => { s += ` T${i}:${f(h)}`; });
    if (this.thermal.bed) s += ` B:${f(this.thermal.bed)}`;
    if (this.thermal.chamber) s += ` C:${f(this.thermal.chamber)}`;
    s += ' @:0';
    if (this.thermal.bed) s += ' B@:0';
    return s;
  }

  startSdPrint(): void {
    runSdPrint(this);
  }

  kill(reason: string): void {
    if (this.killed) return;
    this.send(`Error:${reason}`);
    this.killed = true;
    for (const h of this.thermal.all()) h.target = 0;
    if (this.state.sdJob) this.state.sdJob.stopRequested = true;
    this.planner.clear();
    this.scheduler.stop();
  }

  private vanish(err: Error): void {
    this.stop();
    this.disconnected(err);
  }

  private debug(text: string): void {
    const sp = text.indexOf(' ');
    const name = sp === -1 ? text : text.slice(0, sp);
    const entry = debugCommands[name];
    const ctl: DebugControl = {
      fw: this, disconnect: () => this.vanish(new Error('virtual printer disconnected')), dropNext: () => { this.dropNextLine = true; },
      reset: () => this.reset(),
    };
    if (entry) entry.run(ctl, sp === -1 ? '' : text.slice(sp + 1));
    else for (const [k, v] of Object.entries(debugCommands)) this.send(`echo:!!DEBUG:${k} - ${v.description}`);
  }

  /** Power off: timers cancelled, no more output. */
  stop(): void {
    if (this.stopped) return;
    this.state.stopTempReport?.();
    this.state.stopSdReport?.();
    if (this.state.sdJob) this.state.sdJob.stopRequested = true;
    this.scheduler.stop();
    this.planner.clear();
    this.stopped = true;
  }
}

/** The command of a raw line: without `N<n> ` and `*<cs>`. */
function commandPart(raw: string): string {
  let s = raw.trim();
  if (s[0] === 'N' || s[0] === 'n') {
    const sp = s.indexOf(' ');
    s = sp === -1 ? '' : s.slice(sp + 1);
  }
  const star = s.lastIndexOf('*');
  return star === -1 ? s : s.slice(0, star);
}
