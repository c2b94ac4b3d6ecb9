// OctoPrint-MQTT's topic set: events with `_event`/`_timestamp`, print and slicing progress, temperatures past a
// threshold. Listeners only compare and hand messages to the outbox; nothing here waits on the broker.
import type { TemperatureHistoryEntry } from '../printer/types.ts';
import type { MqttSettings } from './settings.ts';
import { eventClass } from './settings.ts';
import type { FileMetadataSource, MqttJobSource, Publish, SlicingProgress } from './types.ts';

/** Events the plugin publishes retained (when `broker.retain` is on); every other event is not retained. */
const RETAINED_EVENTS = new Set(['ZChange', 'FirmwareData']);
const PROGRESS_STARTERS = new Set(['PrintStarted', 'PrintDone', 'FileSelected', 'FileDeselected']);
const PRINT_ENDS = new Set(['PrintDone', 'PrintFailed', 'PrintCancelled']);

/** The value at a dot path (`analysis.filament.tool0.length`), undefined when any step is missing. */
export function valueAt(data: unknown, path: string): unknown {
  let v: unknown = data;
  for (const part of path.split('.')) {
    if (typeof v !== 'object' || v === null || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

type Heater = { actual: number | null; target: number | null };

export class OctoPrintMqttPublisher {
  private lastTemps = new Map<string, Heater>();
  private progressTimer: NodeJS.Timeout | undefined;
  private lastProgress: { path: string; progress: number } | undefined;
  /** Metadata is read from disk: a print's end must clear what its start published, so they go in order. */
  private metadataChain: Promise<void> = Promise.resolve();

  constructor(
    private readonly s: MqttSettings,
    private readonly publish: Publish,
    private readonly jobs: MqttJobSource,
    private readonly printerData: () => Record<string, unknown>,
    private readonly now: () => number,
    private readonly fileMetadata?: FileMetadataSource,
  ) {}

  stop(): void {
    clearInterval(this.progressTimer);
    this.progressTimer = undefined;
  }

  private ts(extra: Record<string, unknown>, at?: number): Record<string, unknown> {
    return { ...extra, [this.s.tsField]: Math.floor(at ?? this.now() / 1000) };
  }

  /** First connect: the empty progress messages the plugin sends, so retained readers start from a known state. */
  onFirstConnect(): void {
    const printing = this.s.topics.progress('printing');
    if (printing) this.publish(printing, this.ts({ location: '', path: '', progress: 0 }), { retain: true });
    const slicing = this.s.topics.progress('slicing');
    if (slicing) {
      this.publish(slicing, this.ts({ slicer: '', source_location: '', source_path: '', destination_location: '',
        destination_path: '', progress: 0 }), { retain: this.s.retain });
    }
  }

  event(name: string, payload: unknown): void {
    if (PROGRESS_STARTERS.has(name)) this.startProgress();
    if (name === 'PrintStarted' || PRINT_ENDS.has(name)) this.metadata(name === 'PrintStarted', payload);
    const topic = this.s.topics.event(name);
    if (!topic || this.s.eventClasses[eventClass(name)] === false) return;
    const body = typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload : {};
    this.publish(topic, this.ts({ ...body, _event: name }), { retain: this.s.retain && RETAINED_EVENTS.has(name) });
  }

  /**
   * `publish.metadataActive`: at print start each `metadataKeys` path of the file's metadata on `metadata/<key>`
   * (strings raw, anything else as JSON; a missing key is not published); at the end an empty payload on each, which
   * clears a retained value.
   */
  metadata(start: boolean, payload: unknown): Promise<void> {
    const keys = this.s.metadataKeys.filter((k) => this.s.topics.metadata(k) !== null);
    if (keys.length === 0) return this.metadataChain;
    const p = (typeof payload === 'object' && payload !== null ? payload : {}) as { origin?: unknown; path?: unknown };
    this.metadataChain = this.metadataChain.then(async () => {
      let data: Record<string, unknown> | null = null;
      if (start) {
        if (!this.fileMetadata || typeof p.path !== 'string') return;
        data = await this.fileMetadata(typeof p.origin === 'string' ? p.origin : 'local', p.path).catch(() => null);
        if (!data) return;
      }
      for (const key of keys) {
        const topic = this.s.topics.metadata(key)!;
        if (!start) {
          this.publish(topic, '', { retain: this.s.retain });
          continue;
        }
        const value = valueAt(data, key);
        if (value === undefined) continue;
        this.publish(topic, typeof value === 'string' ? value : JSON.stringify(value), { retain: this.s.retain });
      }
    });
    return this.metadataChain;
  }

  /** A firmware line: `echo:busy: paused for user` becomes the plugin's synthesized PausedForUser event. */
  reply(line: string): void {
    if (!line.startsWith('echo:busy: paused for user')) return;
    const topic = this.s.topics.event('PausedForUser');
    if (topic && this.s.eventClasses.unclassified !== false) this.publish(topic, this.ts({ _event: 'PausedForUser' }), { retain: this.s.retain });
  }

  temperature(entry: TemperatureHistoryEntry): void {
    for (const [heater, value] of Object.entries(entry)) {
      if (heater === 'time' || typeof value !== 'object' || value === null) continue;
      const { actual, target } = value;
      if (!actual && !target) continue;
      const last = this.lastTemps.get(heater);
      const moved = (a: number | null, b: number | null, min: number) => a !== b && (a === null || b === null || Math.abs(a - b) >= min - 1e-9);
      if (last && !moved(actual, last.actual, this.s.threshold) && !moved(target, last.target, 0.1)) continue;
      const topic = this.s.topics.temperature(heater);
      if (!topic) continue;
      this.lastTemps.set(heater, { actual, target });
      this.publish(topic, this.ts({ actual, target }, entry.time), { retain: this.s.retain });
    }
  }

  slicing(p: SlicingProgress): void {
    const topic = this.s.topics.progress('slicing');
    if (!topic) return;
    this.publish(topic, this.ts({ slicer: p.slicer, source_location: p.source_location, source_path: p.source_path,
      destination_location: p.dest_location, destination_path: p.dest_path, progress: Math.round(p.progress) }), { retain: this.s.retain });
  }

  /** Like the plugin: a timer that publishes when progress or path changed and ends itself once done or idle. */
  private startProgress(): void {
    if (this.progressTimer) return;
    const tick = () => {
      const completion = this.printProgress();
      if (completion === null || completion >= 100) this.stop();
    };
    this.progressTimer = setInterval(tick, this.s.progressIntervalMs);
    this.progressTimer.unref();
    // The plugin's first tick is 5 s late; answering at once tells dashboards a print began without waiting.
    setImmediate(tick);
  }

  /** Publishes print progress when it changed; returns the completion (null when nothing is selected). */
  printProgress(): number | null {
    const topic = this.s.topics.progress('printing');
    const job = this.jobs.job();
    const file = (job.file ?? {}) as { path?: string | null; origin?: string | null };
    const completion = this.jobs.progress().completion;
    const value = typeof completion === 'number' ? completion : null;
    const progress = value === null ? 0 : Math.round(value);
    const path = file.path ?? '';
    if (topic && (this.lastProgress?.path !== path || this.lastProgress.progress !== progress)) {
      this.lastProgress = { path, progress };
      const payload: Record<string, unknown> = { location: file.origin ?? '', path, progress };
      if (this.s.printerData) payload.printer_data = this.printerData();
      this.publish(topic, this.ts(payload), { retain: true });
    }
    return value;
  }
}
