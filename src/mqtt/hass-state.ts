// Home Assistant state topics in OctoPrint-HomeAssistant's shape: hass/printing (the printer's current data),
// hass/Connected, hass/is_printing, hass/is_paused, temperature/soc, and the camera image.
import { readFile } from 'node:fs/promises';
import type { MqttSettings } from './settings.ts';
import type { MqttJobSource, MqttPrinterSource, Publish } from './types.ts';

const COMM_EVENTS = new Set(['Connecting', 'Connected', 'Disconnecting', 'Disconnected', 'Error', 'PrinterStateChanged']);
const PRINTING_DATA_EVENTS = new Set([...COMM_EVENTS, 'FileSelected', 'FileDeselected', 'CaptureDone', 'ZChange',
  'PrintStarted', 'PrintFailed', 'PrintDone', 'PrintCancelled', 'PrintPaused', 'PrintResumed']);
const SOC_SENSOR = '/sys/class/thermal/thermal_zone0/temp';
const PRINTING_MIN_INTERVAL_MS = 500;

/** `H:MM:SS` like Python's str(timedelta) for under a day, null for no value. */
export function formatDuration(seconds: unknown): string | null {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return null;
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

export class HassState {
  private ticker: NodeJS.Timeout | undefined;
  private socTimer: NodeJS.Timeout | undefined;
  private lastPercent: number | null = null;
  private ticks = 0;
  /** When hass/printing was last sent, on the monotonic clock (a jump of the wall clock must not hold it back). */
  private lastPrinting = -Infinity;
  private printingTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly s: MqttSettings,
    private readonly publish: Publish,
    private readonly printer: MqttPrinterSource,
    private readonly jobs: MqttJobSource,
    private readonly now: () => number,
  ) {}

  private topic(name: string): string {
    return this.s.base + this.s.topics.hassSub(name);
  }

  private state(name: string, payload: unknown): void {
    this.publish(this.topic(name), payload, { retain: this.s.retain });
  }

  /** The printer's current data as the plugin publishes it on hass/printing (also `printer_data` of progress). */
  printingData(): Record<string, unknown> {
    const st = this.printer.state();
    const job = this.jobs.job();
    const progress = this.jobs.progress();
    return {
      state: { text: st.text, flags: st.flags, error: st.error },
      job: { ...job, estimatedPrintTimeFormatted: formatDuration(job.estimatedPrintTime) },
      currentZ: this.printer.currentZ(),
      progress: { ...progress, printTimeLeftFormatted: formatDuration(progress.printTimeLeft), printTimeFormatted: formatDuration(progress.printTime) },
      offsets: this.printer.offsets(),
      resends: this.printer.resends(),
      [this.s.tsField]: Math.floor(this.now() / 1000),
    };
  }

  /**
   * At most one hass/printing every 500 ms (the newest state, sent at the end of the interval): the plugin sends it on
   * every ZChange, which in vase mode is every line, and a ~1 KB document per line is a cost to nobody's benefit.
   */
  private publishPrinting(): void {
    const now = performance.now();
    if (this.printingTimer) return;
    const wait = this.lastPrinting + PRINTING_MIN_INTERVAL_MS - now;
    if (wait <= 0) {
      this.lastPrinting = now;
      this.state('printing', this.printingData());
      return;
    }
    this.printingTimer = setTimeout(() => {
      this.printingTimer = undefined;
      this.lastPrinting = performance.now();
      this.state('printing', this.printingData());
    }, wait);
    this.printingTimer.unref();
  }

  private publishConnected(): void {
    this.state('Connected', this.printer.state().flags.closedOrError ? 'Disconnected' : 'Connected');
  }

  /** What a fresh start publishes (also after a settings change). */
  start(): void {
    this.publishPrinting();
    this.publishConnected();
    const printing = this.printer.state().flags.printing;
    this.state('is_printing', printing ? 'True' : 'False');
    this.state('is_paused', this.printer.state().flags.paused ? 'True' : 'False');
    if (printing) this.startTicker();
    const soc = () => { void this.soc(); };
    soc();
    this.socTimer = setInterval(soc, 30_000);
    this.socTimer.unref();
  }

  stop(): void {
    clearInterval(this.ticker);
    clearInterval(this.socTimer);
    clearTimeout(this.printingTimer);
    this.ticker = undefined;
  }

  event(name: string, payload: unknown): void {
    if (PRINTING_DATA_EVENTS.has(name)) this.publishPrinting();
    if (COMM_EVENTS.has(name)) this.publishConnected();
    if (name === 'PrintStarted') {
      this.state('is_printing', 'True');
      this.state('is_paused', 'False');
      this.startTicker();
    } else if (name === 'PrintDone' || name === 'PrintFailed' || name === 'PrintCancelled') {
      this.state('is_printing', 'False');
      this.state('is_paused', 'False');
    } else if (name === 'PrintPaused') {
      this.state('is_paused', 'True');
    } else if (name === 'PrintResumed') {
      this.state('is_paused', 'False');
    } else if (name === 'CaptureDone') {
      const file = (payload as { file?: unknown } | null)?.file;
      if (typeof file === 'string') void readFile(file).then((jpeg) => this.camera(jpeg), () => {});
    }
  }

  camera(jpeg: Buffer): void {
    this.publish(this.s.base + 'camera', jpeg, { retain: this.s.retain });
  }

  /** Each whole percent of print progress, and every 60 s while printing, hass/printing is sent again. */
  private startTicker(): void {
    if (this.ticker) return;
    this.ticks = 0;
    this.lastPercent = null;
    this.ticker = setInterval(() => {
      if (!this.printer.state().flags.printing && !this.printer.state().flags.paused) {
        clearInterval(this.ticker);
        this.ticker = undefined;
        return;
      }
      this.ticks++;
      const c = this.jobs.progress().completion;
      const percent = typeof c === 'number' ? Math.floor(c) : null;
      if (percent !== this.lastPercent || this.ticks % 60 === 0) {
        this.lastPercent = percent;
        this.publishPrinting();
      }
    }, 1000);
    this.ticker.unref();
  }

  private async soc(): Promise<void> {
    let temperature: number | null = null;
    try {
      const milli = Number((await readFile(SOC_SENSOR, 'utf8')).trim());
      if (Number.isFinite(milli)) temperature = Math.round(milli / 100) / 10;
    } catch {
      // No CPU sensor (containers, most VMs): the plugin publishes null too.
    }
    const topic = this.s.topics.temperature('soc');
    if (topic) this.publish(topic, { temperature, [this.s.tsField]: Math.floor(this.now() / 1000) }, { retain: this.s.retain });
  }
}
