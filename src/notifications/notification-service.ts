// The notifier: turns the bus's events (and print progress) into messages for each configured target, with a snapshot
// when asked. It never sits in front of the print: listeners only queue work for a later turn, every target has its own
// queue (delivery-queue.ts), and a target that hangs or refuses delays nothing but itself.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { ConfigSlice } from '../config/config-slice.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { Plain } from '../core/plain.ts';
import { DEFAULT_NOTIFY_EVENTS } from '../config/notifications-schema.ts';
import { DEFAULT_MESSAGES, NOTIFY_TYPE, SNAPSHOT_EVENTS, formatDuration, placeholders, render } from './messages.ts';
import type { Notification, Sender, Snapshot } from './notification.ts';
import { DeliveryQueue, type DeliveryOutcome } from './delivery-queue.ts';
import { chooseSender, type Transport } from './sender-choice.ts';
import { appriseVersion } from './apprise-sender.ts';
import { maskUrl, redact } from './secret-url.ts';
import { fetchSnapshot } from '../timelapse/snapshot.ts';

type Section = 'plugins' | 'appearance' | 'webcam';

export interface TargetSettings {
  name?: string;
  url: string;
  events?: string[];
  snapshot?: boolean;
  snapshotAs?: 'base64' | 'link';
  transport?: Transport;
  enabled?: boolean;
}

export interface NotificationSettings {
  enabled: boolean;
  targets: TargetSettings[];
  progressStep: number;
  layers?: number[];
  layerStep?: number;
  messages: Record<string, { title?: string; body?: string }>;
  perMinute: number;
  queueSize: number;
  retries: number;
  retryDelay: number;
  timeout: number;
}

/** What the job runner tells the notifier about a running print. */
export interface PrintProgressSource {
  (): { completion: number | null; printTimeLeft: number | null } | null;
}

export interface NotificationDeps {
  config: ConfigSlice<Section>;
  events: EventBus;
  clock: Clock;
  logger: Logger;
  progress: PrintProgressSource;
  /** How often progress is looked at while printing (ms). */
  progressPollMs?: number;
}

export interface DeliveryRecord {
  time: number;
  event: string;
  target: string;
  ok: boolean;
  attempts: number;
  error?: string;
}

interface Outgoing { n: Notification; release: () => void }
interface Route { key: string; url: string; target: TargetSettings; sender: Sender | null; problem: string | null; queue: DeliveryQueue<Outgoing> }

const RECENT = 50;
const NOTIFIED = new Set(Object.keys(DEFAULT_MESSAGES).filter((e) => e !== 'Test' && e !== 'PrintProgress' && e !== 'PrintLayer'));
/** Layer progress's event (src/layer-progress/, DisplayLayerProgress's name): the layer a print is on. */
const LAYER_EVENT = 'DisplayLayerProgress_layerChanged';
/** Its progress event: the job's progress can reach a step after the last ZChange was seen (a link thread reports in batches). */
const PROGRESS_EVENT = 'DisplayLayerProgress_progressChanged';

export class NotificationService {
  private routes = new Map<string, Route>();
  private readonly recent: DeliveryRecord[] = [];
  private unsubscribe: (() => void)[] = [];
  private progressTimer: ReturnType<typeof setInterval> | null = null;
  private lastStep = 0;
  private lastLayer = 0;
  private printPayload: Plain = {};
  private tmpDir: string | null = null;
  private readonly abort = new AbortController();
  private appriseInstalled = false;
  private appriseProbed = false;
  private appriseKnown = false;
  private readonly log: Logger;

  constructor(private readonly deps: NotificationDeps) {
    this.log = deps.logger;
  }

  settings(): NotificationSettings {
    return (this.deps.config.get().plugins as Plain).notifications as NotificationSettings;
  }

  async start(): Promise<void> {
    this.rebuild();
    this.unsubscribe.push(this.deps.config.onChange(() => this.rebuild()));
    this.unsubscribe.push(this.deps.events.onAny('notifications', (name, payload) => {
      // Only a note for later: the bus (and the printer behind it) goes on at once.
      // A layer change is when progress has moved: looked at then, and by a slow timer through long layers.
      if (name === 'ZChange' || (name as string) === PROGRESS_EVENT) { if (this.progressTimer) setImmediate(() => this.checkProgress()); return; }
      if ((name as string) === LAYER_EVENT) { if (this.progressTimer) { const p = (payload ?? {}) as Plain; setImmediate(() => this.checkLayer(p)); } return; }
      if (NOTIFIED.has(name)) setImmediate(() => this.onEvent(name, (payload ?? {}) as Plain));
    }));
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    this.stopProgress();
    this.abort.abort(new Error('the server is stopping'));
    for (const r of this.routes.values()) r.queue.stop();
    this.routes.clear();
    if (this.tmpDir) await rm(this.tmpDir, { recursive: true, force: true });
  }

  /** The targets as an admin's UI lists them (URLs masked) and the last deliveries. */
  status(): { apprise: boolean; targets: { name: string; url: string; kind: string | null; events: string[]; problem: string | null; waiting: number }[]; recent: DeliveryRecord[] } {
    return {
      apprise: this.appriseInstalled,
      targets: [...this.routes.values()].map((r) => ({
        name: r.target.name ?? '', url: maskUrl(r.url), kind: r.sender?.kind ?? null, events: this.eventsOf(r.target),
        problem: r.problem, waiting: r.queue.length,
      })),
      recent: [...this.recent].reverse(),
    };
  }

  /** Sends a test message to one target (by its index) or every target, at once and once, and says how each went. */
  async test(index?: number): Promise<{ target: number; name: string; ok: boolean; error?: string }[]> {
    const routes = [...this.routes.values()];
    const chosen = index === undefined ? routes.map((r, i) => [r, i] as const) : routes[index] ? [[routes[index], index] as const] : [];
    const wantsSnapshot = chosen.some(([r]) => r.target.snapshot);
    const snapshot = wantsSnapshot ? await this.snapshot() : null;
    try {
      return await Promise.all(chosen.map(async ([r, i]) => {
        const name = r.target.name || maskUrl(r.url);
        if (!r.sender) return { target: i, name, ok: false, error: r.problem ?? 'not usable' };
        const n = this.compose('Test', {}, {}, r.target.snapshot ? snapshot : null);
        try {
          await r.sender.send(n, this.sendOptions(r.target));
          this.record({ time: this.deps.clock.now(), event: 'Test', target: name, ok: true, attempts: 1 });
          return { target: i, name, ok: true };
        } catch (e) {
          const error = redact(e instanceof Error ? e.message : String(e), r.url);
          this.record({ time: this.deps.clock.now(), event: 'Test', target: name, ok: false, attempts: 1, error });
          return { target: i, name, ok: false, error };
        }
      }));
    } finally {
      if (snapshot) await rm(snapshot.file, { force: true });
    }
  }

  private eventsOf(t: TargetSettings): string[] {
    return t.events ?? DEFAULT_NOTIFY_EVENTS;
  }

  private sendOptions(t: TargetSettings) {
    const s = this.settings();
    return { timeoutMs: s.timeout * 1000, snapshotAs: t.snapshotAs ?? 'base64', signal: this.abort.signal } as const;
  }

  /**
   * Whether Apprise is installed is asked only once a target could use it (a Python start costs ~0.2 s of CPU, which
   * a server without such targets never pays); the targets are built again when the answer comes.
   */
  private probeApprise(): void {
    if (this.appriseProbed) return;
    this.appriseProbed = true;
    void appriseVersion().then((v) => {
      this.appriseInstalled = v !== null;
      // The routes keep their queues; only their senders are chosen again (a queued message takes the new one).
      this.appriseKnown = true;
      for (const r of this.routes.values()) Object.assign(r, this.senderFor(r.target));
    });
  }

  /** Targets as configured now: a changed URL or transport gets a new queue, an unchanged one keeps its queue. */
  private rebuild(): void {
    const s = this.settings();
    if (s.targets.some((t) => !/^https?:\/\//i.test(t.url) && t.transport !== 'builtin')) this.probeApprise();
    const next = new Map<string, Route>();
    for (const [i, target] of s.targets.entries()) {
      if (target.enabled === false) continue;
      const key = `${i}\n${target.url}\n${target.transport ?? 'auto'}`;
      const old = this.routes.get(key);
      if (old) {
        old.target = target;
        next.set(key, old);
        continue;
      }
      const { sender, problem } = this.senderFor(target);
      const route: Route = {
        key, url: target.url, target, sender, problem,
        queue: new DeliveryQueue<Outgoing>(
          async ({ n }) => {
            if (!route.sender) throw new Error(route.problem ?? 'not usable');
            await route.sender.send(n, this.sendOptions(route.target));
          },
          () => { const now = this.settings(); return { perMinute: now.perMinute, queueSize: now.queueSize, retries: now.retries, retryDelayMs: now.retryDelay * 1000 }; },
          (outcome) => this.delivered(route, outcome),
          this.deps.clock,
        ),
      };
      next.set(key, route);
    }
    for (const [key, r] of this.routes) if (!next.has(key)) r.queue.stop();
    this.routes = next;
  }

  private senderFor(target: TargetSettings): { sender: Sender | null; problem: string | null } {
    try {
      const sender = chooseSender(target.url, target.transport ?? 'auto', this.appriseInstalled);
      const problem = sender.kind === 'apprise' && !this.appriseInstalled && this.appriseKnown ? 'apprise is not installed (Debian: apt-get install apprise)' : null;
      return { sender, problem };
    } catch (e) {
      return { sender: null, problem: redact(e instanceof Error ? e.message : String(e), target.url) };
    }
  }

  private delivered(route: Route, outcome: DeliveryOutcome<Outgoing>): void {
    outcome.item.release();
    const target = route.target.name || maskUrl(route.url);
    const error = outcome.error === undefined ? undefined : redact(outcome.error, route.url);
    this.record({ time: this.deps.clock.now(), event: outcome.item.n.event, target, ok: outcome.ok, attempts: outcome.attempts, ...(error ? { error } : {}) });
    if (!outcome.ok) this.log.warn({ target, event: outcome.item.n.event, attempts: outcome.attempts, error }, 'notification not delivered');
  }

  private record(r: DeliveryRecord): void {
    this.recent.push(r);
    if (this.recent.length > RECENT) this.recent.shift();
  }

  private onEvent(name: string, payload: Plain): void {
    if (name === 'PrintStarted') {
      this.printPayload = payload;
      this.startProgress();
    } else if (name === 'PrintDone' || name === 'PrintFailed' || name === 'PrintCancelled') {
      this.stopProgress();
    }
    // OctoPrint sends PrintFailed (reason cancelled) beside PrintCancelled: one message for one cancel.
    if (name === 'PrintFailed' && payload.reason === 'cancelled') return;
    if (NOTIFIED.has(name)) void this.dispatch(name, payload, {});
  }

  /** PrintLayer at the chosen layers (plugins.notifications.layers) and every layerStep layers, once each per print. */
  private checkLayer(p: Plain): void {
    const layer = Number(p.currentLayer);
    if (!Number.isInteger(layer) || layer <= this.lastLayer) return;
    const s = this.settings();
    const at = (s.layers ?? []).filter((n) => n > this.lastLayer && n <= layer);
    const step = s.layerStep ?? 0;
    const stepped = step > 0 && Math.floor(layer / step) > Math.floor(this.lastLayer / step);
    this.lastLayer = layer;
    if (at.length === 0 && !stepped) return;
    const completion = this.deps.progress()?.completion;
    const progress = typeof completion === 'number' ? String(Math.floor(completion)) : '?';
    void this.dispatch('PrintLayer', { ...this.printPayload, layer, layers: p.totalLayer }, { layer: String(layer), layers: String(p.totalLayer ?? '?'), progress });
  }

  private startProgress(): void {
    this.stopProgress();
    this.lastStep = 0;
    this.lastLayer = 0;
    this.progressTimer = setInterval(() => this.checkProgress(), this.deps.progressPollMs ?? 10_000);
    this.progressTimer.unref?.();
  }

  private stopProgress(): void {
    if (this.progressTimer) clearInterval(this.progressTimer);
    this.progressTimer = null;
  }

  private checkProgress(): void {
    const step = this.settings().progressStep;
    const p = this.deps.progress();
    if (step <= 0 || !p || p.completion === null) return;
    // The highest step below 100 % (100 % is the print's own PrintDone): a poll that finds the print already at its
    // end (a short print, or progress counted by the lines handed to the link ahead of the printer) still tells the
    // step it crossed instead of none.
    const top = Math.ceil(100 / step) * step - step;
    const reached = Math.min(Math.floor(p.completion / step) * step, top);
    if (reached <= this.lastStep) return;
    this.lastStep = reached;
    const left = p.printTimeLeft === null ? 'unknown time' : formatDuration(p.printTimeLeft);
    void this.dispatch('PrintProgress', { ...this.printPayload, progress: reached }, { progress: String(reached), left });
  }

  private compose(event: string, payload: Plain, extra: Plain, snapshot: Snapshot | null): Notification {
    const c = this.deps.config.get();
    const printer = (c.appearance as { name?: string }).name || 'Gantry';
    const own = this.settings().messages[event] ?? {};
    const def = DEFAULT_MESSAGES[event] ?? { title: '{printer}: {event}', body: '{event}' };
    const values = placeholders(event, payload, printer, { progress: extra.progress ?? payload.progress, ...extra });
    return {
      event, printer, payload, time: this.deps.clock.now(), snapshot, type: NOTIFY_TYPE[event] ?? 'info',
      title: render(own.title ?? def.title, values), body: render(own.body ?? def.body, values),
    };
  }

  private async dispatch(event: string, payload: Plain, extra: Plain): Promise<void> {
    const s = this.settings();
    if (!s.enabled) return;
    const routes = [...this.routes.values()].filter((r) => this.eventsOf(r.target).includes(event));
    if (routes.length === 0) return;
    const wants = SNAPSHOT_EVENTS.has(event) && routes.some((r) => r.target.snapshot);
    const snapshot = wants ? await this.snapshot() : null;
    // The snapshot file goes once every target that got it is done with it.
    let holders = 0;
    const release = () => { if (--holders === 0 && snapshot) void rm(snapshot.file, { force: true }); };
    for (const r of routes) {
      holders++;
      r.queue.push({ n: this.compose(event, payload, extra, r.target.snapshot ? snapshot : null), release });
    }
  }

  private snapshotCount = 0;
  private async snapshot(): Promise<Snapshot | null> {
    const w = this.deps.config.get().webcam as { snapshot?: string; snapshotTimeout?: number; snapshotSslValidation?: boolean };
    if (!w.snapshot) return null;
    this.tmpDir ??= await mkdtemp(join(tmpdir(), 'gantry-notify-'));
    const file = join(this.tmpDir, `snapshot-${++this.snapshotCount}.jpg`);
    try {
      await fetchSnapshot({ url: w.snapshot, timeout: w.snapshotTimeout ?? 5, validateSsl: w.snapshotSslValidation ?? true }, file, this.abort.signal);
      // Cameras' snapshot URLs answer JPEG (mjpg-streamer, ustreamer, go2rtc, Home Assistant's camera proxy).
      return { file, mimetype: 'image/jpeg', url: w.snapshot };
    } catch (e) {
      this.log.warn({ error: e instanceof Error ? e.message : String(e) }, 'notification sent without a snapshot: the camera did not give one');
      return null;
    }
  }
}
