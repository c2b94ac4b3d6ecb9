// Layer progress (DisplayLayerProgress compatible, docs/reference/plugins.md §3): the current layer, height, fan and
// feed rate of a print looked up from its position in the file (layer-index.ts) once a second, the values for
// `/plugin/DisplayLayerProgress/values`, the `DisplayLayerProgress_<reason>` events and the
// `DisplayLayerProgress-websocket-payload` push; and the printer's own screen (printer-display.ts).
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { Config } from '../config/schema.ts';
import type { JobSnapshot } from '../printer/job/job-types.ts';
import type { PrinterStateSnapshot, TemperatureSnapshot } from '../printer/types.ts';
import { buildLayerIndex, lastAtOrBefore, type LayerIndex } from './layer-index.ts';
import { conflict, invalid, notFound, notOperational } from '../core/errors.ts';
import { renderM117, throttled, type Throttle } from './printer-display.ts';

export type LayerProgressSettings = Config['plugins']['DisplayLayerProgress'];

export interface LayerProgressDeps {
  /** Its slice of the settings (`config.slice('plugins')`), read live. */
  config: { get(): { plugins: { DisplayLayerProgress: LayerProgressSettings } } };
  jobs: { snapshot(): JobSnapshot; isPrinting(): boolean };
  printer: { state(): PrinterStateSnapshot; currentZ(): number | null; temperatures(): TemperatureSnapshot; commands(lines: string[]): void; isOperational(): boolean;
    setTemperatures(targets: Record<string, number>): void; };
  /** Absolute path of a local file. */
  absolutePath: (path: string) => Promise<string>;
  events: EventBus;
  push: (identifier: string, data: unknown) => void;
  logger: Logger;
  now?: () => number;
  tickMs?: number;
}

const OWNER = 'layerProgress';
type Reason = 'layerChanged' | 'heightChanged' | 'progressChanged' | 'feedrateChanged' | 'fanspeedChanged' | 'printerStateChanged' | 'm600Occurred'
  | 'timerTrigger' | 'frontEndCall';

/** `{H}h:{M:02}m:{S:02}s` (the plugin's layerAverageFormatPattern). */
const layerDuration = (s: number) => `${Math.floor(s / 3600)}h:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m:${String(Math.floor(s % 60)).padStart(2, '0')}s`;
/** The plugin's secondsToText without seconds above a minute (printTimeLeftWithoutSeconds): `1h5m`, `2m`, `40s`. */
function timeLeftText(s: number): string {
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${m}m`;
  if (m > 0) return `${m}m`;
  return `${Math.round(s)}s`;
}
const clock = (ms: number) => { const d = new Date(ms); return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`; };

function stateWord(s: PrinterStateSnapshot): string {
  const f = s.flags;
  if (f.error || f.closedOrError && s.error !== '') return 'error';
  if (f.paused || f.pausing) return 'paused';
  if (f.printing) return 'printing';
  if (f.operational) return 'operational';
  return 'offline';
}

interface Live {
  path: string;
  index: LayerIndex | null;
  layerAt: number;
  layerSince: number;
  durations: number[];
  m600Seen: number;
}

export class LayerProgressService {
  private live: Live | null = null;
  private selectedIndex: { path: string; index: Promise<LayerIndex | null> } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private last: Record<string, unknown> = {};
  private lastPushed = '';
  private lastValues: Record<string, string | number> = {};
  private readonly m117: Throttle = { last: '', at: -Infinity };
  private readonly m73: Throttle = { last: '', at: -Infinity };
  private readonly now: () => number;

  constructor(private readonly deps: LayerProgressDeps) {
    this.now = deps.now ?? Date.now;
  }

  async start(): Promise<void> {
    const ev = this.deps.events;
    ev.on(OWNER, 'FileSelected', (p) => { if (p.origin === 'local' && typeof p.path === 'string') this.indexFor(p.path); });
    ev.on(OWNER, 'PrintStarted', (p) => this.started(p.origin, p.path));
    for (const end of ['PrintDone', 'PrintFailed', 'PrintCancelled'] as const) ev.on(OWNER, end, () => this.ended());
    ev.on(OWNER, 'PrinterStateChanged', () => this.update('printerStateChanged'));
  }

  async stop(): Promise<void> {
    this.deps.events.removeOwner(OWNER);
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private indexFor(path: string): Promise<LayerIndex | null> {
    if (this.selectedIndex?.path !== path) {
      const index = this.deps.absolutePath(path).then((abs) => buildLayerIndex(abs)).catch((err: unknown) => {
        this.deps.logger.warn({ err, path }, 'layer progress: the file could not be indexed');
        return null;
      });
      this.selectedIndex = { path, index };
    }
    return this.selectedIndex.index;
  }

  private started(origin: string, path: string): void {
    const live: Live = { path, index: null, layerAt: -1, layerSince: this.now(), durations: [], m600Seen: 0 };
    this.live = live;
    this.m117.last = ''; this.m73.last = '';
    this.m117.at = -Infinity; this.m73.at = -Infinity;
    if (origin === 'local') void this.indexFor(path).then((idx) => { if (this.live === live) { live.index = idx; this.update('layerChanged'); } });
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => this.update('timerTrigger'), this.deps.tickMs ?? 1000);
    this.timer.unref();
    this.update('printerStateChanged');
  }

  private ended(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.update('progressChanged');
  }

  /** The plugin's `/values` shape (strings, `"-"` for unknown). */
  values(): Record<string, unknown> {
    const v = this.compute();
    return {
      layer: { total: v.totalLayer, current: v.currentLayer, averageLayerDuration: v.averageLayerDuration, averageLayerDurationInSeconds: v.averageLayerDurationInSeconds,
        lastLayerDuration: v.lastLayerDuration, lastLayerDurationInSeconds: v.lastLayerDurationInSeconds },
      height: { total: v.totalHeight, current: v.currentHeight, totalFormatted: v.totalHeightFormatted, currentFormatted: v.currentHeightFormatted },
      fanSpeed: v.fanspeed, feedrate: v.feedrate, feedrateG0: v.feedrateG0, feedrateG1: v.feedrateG1,
      print: { printerState: v.printerState, progress: v.progress, m73progress: v.m73progress, timeLeft: v.printTimeLeft, timeLeftInSeconds: v.printTimeLeftInSeconds,
        estimatedEndTime: v.estimatedEndTime, estimatedChangedFilamentTime: v.estimatedChangedFilamentTime, changeFilamentTimeLeft: v.changeFilamentTimeLeft,
        changeFilamentTimeLeftInSeconds: v.changeFilamentTimeLeftInSeconds, changeFilamentCount: v.changeFilamentCount },
      currentFilename: v.currentFilename,
    };
  }

  /**
   * Preheat from a file: the first layer's targets (the first non-zero M104/M109/M140/M190 before its second layer) of
   * `path`, or of the selected file, set on the printer. Returns what was set; throws when the file sets none.
   */
  async preheat(path: string | undefined): Promise<Record<string, number>> {
    const file = path ?? (this.deps.jobs.snapshot().file?.origin === 'local' ? this.deps.jobs.snapshot().file?.path : undefined);
    if (file === undefined) throw invalid('No file given and no local file selected');
    if (!this.deps.printer.isOperational()) throw notOperational();
    const idx = await this.indexFor(file);
    if (idx === null) throw notFound(`${file} could not be read`);
    const temps = idx.firstLayerTemps;
    if (Object.keys(temps).length === 0) throw conflict(`${file} sets no temperatures for its first layer`);
    this.deps.printer.setTemperatures(temps);
    return temps;
  }

  /** GET /api/plugin/DisplayLayerProgress (OctoPod's refresh): an update whose push goes out only when it changed. */
  refresh(): void { this.update('frontEndCall'); }

  private compute(): Record<string, string | number> {
    const snap = this.deps.jobs.snapshot();
    const live = this.live;
    const idx = live?.index ?? null;
    const offset = this.deps.config.get().plugins.DisplayLayerProgress.layerOffset;
    const printing = this.deps.jobs.isPrinting();
    const filepos = snap.progress?.filepos ?? null;
    let currentLayer = '-', totalLayer = '-', fan = '-', feed = '-', feedG0 = '-', feedG1 = '-';
    if (idx && idx.starts.length > 0) {
      totalLayer = String(idx.numbers[idx.numbers.length - 1] + offset);
      if (filepos !== null && live) {
        const i = lastAtOrBefore(idx.starts, filepos);
        currentLayer = String((i < 0 ? 0 : idx.numbers[i]) + offset);
        if (i !== live.layerAt) {
          const t = this.now();
          if (live.layerAt >= 0) {
            live.durations.push((t - live.layerSince) / 1000);
            if (live.durations.length > 5) live.durations.shift();
          }
          live.layerAt = i;
          live.layerSince = t;
        }
      }
    }
    if (idx && filepos !== null) {
      const fi = lastAtOrBefore(idx.fan, filepos, (i) => idx.fan[i][0]);
      fan = fi < 0 ? '-' : idx.fan[fi][1] === 0 ? 'Off' : `${idx.fan[fi][1]}%`;
      const ri = lastAtOrBefore(idx.feed, filepos, (i) => idx.feed[i][0]);
      if (ri >= 0) {
        const [, g0, g1] = idx.feed[ri];
        feedG0 = String(g0); feedG1 = String(g1); feed = String(g1 || g0);
      }
      if (live) live.m600Seen = lastAtOrBefore(idx.m600, filepos) + 1;
    }
    const z = this.deps.printer.currentZ();
    const height = snap.file?.analysis?.dimensions?.height ?? (idx && idx.maxZ > 0 ? idx.maxZ : null);
    const last = live?.durations.at(-1);
    const avg = live && live.durations.length > 0 ? live.durations.reduce((a, b) => a + b, 0) / live.durations.length : undefined;
    const left = snap.progress?.printTimeLeft ?? null;
    const completion = snap.progress?.completion ?? null;
    const now = this.now();
    // The next M600, from the time left in proportion to the bytes left up to it (no per-layer timing is known).
    let changeLeft: number | null = null;
    if (idx && live && filepos !== null && left !== null && live.m600Seen < idx.m600.length) {
      const size = snap.file?.size ?? null;
      if (size !== null && size > filepos) changeLeft = (left * (idx.m600[live.m600Seen] - filepos)) / (size - filepos);
    }
    return {
      totalLayer, currentLayer,
      lastLayerDuration: last === undefined ? '-' : layerDuration(last), lastLayerDurationInSeconds: last === undefined ? '-' : Math.round(last),
      averageLayerDuration: avg === undefined ? '-' : layerDuration(avg), averageLayerDurationInSeconds: avg === undefined ? '-' : Math.round(avg),
      currentHeight: printing && z !== null ? z.toFixed(2) : '-', currentHeightFormatted: printing && z !== null ? z.toFixed(1) : '-',
      totalHeight: height === null ? '-' : height.toFixed(1), totalHeightFormatted: height === null ? '-' : height.toFixed(1),
      feedrate: feed, feedrateG0: feedG0, feedrateG1: feedG1, fanspeed: fan,
      progress: completion === null ? '-' : String(Math.floor(completion)), m73progress: '-',
      printTimeLeft: left === null ? '-' : timeLeftText(left), printTimeLeftInSeconds: left === null ? '-' : Math.round(left),
      printerState: stateWord(this.deps.printer.state()),
      estimatedEndTime: left === null ? '-' : clock(now + left * 1000),
      estimatedChangedFilamentTime: changeLeft === null ? '-' : clock(now + changeLeft * 1000),
      changeFilamentTimeLeft: changeLeft === null ? '-' : timeLeftText(changeLeft),
      changeFilamentTimeLeftInSeconds: changeLeft === null ? '-' : Math.round(changeLeft),
      changeFilamentCount: idx?.m600.length ?? 0,
      currentFilename: live?.path.split('/').at(-1) ?? snap.file?.name ?? '-',
    };
  }

  /** Recomputes; each changed value fires its event, and a changed payload is pushed. */
  private update(reason: Reason): void {
    let v: Record<string, string | number>;
    try {
      v = this.compute();
    } catch (err) {
      this.deps.logger.warn({ err }, 'layer progress: update failed');
      return;
    }
    const prev = this.lastValues;
    const changed: Reason[] = [];
    if (v.currentLayer !== prev.currentLayer || v.totalLayer !== prev.totalLayer) changed.push('layerChanged');
    if (v.currentHeight !== prev.currentHeight) changed.push('heightChanged');
    if (v.progress !== prev.progress) changed.push('progressChanged');
    if (v.feedrate !== prev.feedrate) changed.push('feedrateChanged');
    if (v.fanspeed !== prev.fanspeed) changed.push('fanspeedChanged');
    if (v.printerState !== prev.printerState) changed.push('printerStateChanged');
    if (this.live && this.live.m600Seen > (Number(prev.__m600) || 0)) changed.push('m600Occurred');
    this.lastValues = { ...v, __m600: this.live?.m600Seen ?? 0 };
    const reasons = changed.length > 0 ? changed : reason === 'timerTrigger' || reason === 'frontEndCall' ? [reason] : [];
    for (const r of reasons) {
      const payload = { updateReason: r, ...v };
      if (r !== 'frontEndCall') this.deps.events.emit(`DisplayLayerProgress_${r}`, payload);
      this.last = payload;
    }
    // The push carries the payload when it differs from the last one sent (the plugin dedupes the same way).
    const { updateReason: _r, ...body } = this.last as { updateReason?: string };
    const key = JSON.stringify(body);
    if (reasons.length > 0 && key !== this.lastPushed) {
      this.lastPushed = key;
      this.deps.push('DisplayLayerProgress-websocket-payload', this.last);
    }
    this.printerDisplay(v);
  }

  private printerDisplay(v: Record<string, string | number>): void {
    const g = this.deps.config.get().plugins.DisplayLayerProgress.gantry;
    if ((!g.m117.enabled && !g.m73.enabled) || !this.deps.jobs.isPrinting()) return;
    const snap = this.deps.jobs.snapshot();
    const completion = snap.progress?.completion ?? null;
    const left = snap.progress?.printTimeLeft ?? null;
    const lines: string[] = [];
    const now = this.now();
    if (g.m117.enabled) {
      const text = renderM117(g.m117.template, {
        layer: String(v.currentLayer), layers: String(v.totalLayer), progress: completion, height: String(v.currentHeightFormatted),
        totalHeight: String(v.totalHeightFormatted), left, file: String(v.currentFilename),
      });
      const line = throttled(this.m117, `M117 ${text}`, now, g.m117.interval);
      if (line) lines.push(line);
    }
    if (g.m73.enabled && completion !== null) {
      const line = throttled(this.m73, `M73 P${Math.floor(completion)}${left !== null ? ` R${Math.ceil(left / 60)}` : ''}`, now, g.m73.interval);
      if (line) lines.push(line);
    }
    if (lines.length > 0) {
      try {
        this.deps.printer.commands(lines);
      } catch (err) {
        this.deps.logger.debug({ err }, 'layer progress: the printer display line was not sent');
      }
    }
  }
}
