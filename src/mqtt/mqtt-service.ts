// MQTT service: one broker session built from the settings (rebuilt when they change), fed from the event bus and the
// printer's listeners. Every listener only queues; the broker, the API bridge and commands never hold up the printer.
import { readFile } from 'node:fs/promises';
import type { IPublishPacket } from 'mqtt';
import type { ConfigSlice } from '../config/config-slice.ts';
import type { Config } from '../config/schema.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { Clock } from '../core/clock.ts';
import { BrokerConnection, type OutMessage } from './connection.ts';
import { mqttSettings, type MqttSettings, type MqttSections } from './settings.ts';
import { OctoPrintMqttPublisher } from './publisher.ts';
import { HassState } from './hass-state.ts';
import { discoveryMessages } from './hass-discovery.ts';
import { ApiBridge } from './api-bridge.ts';
import { HassControl } from './hass-control.ts';
import type { ApiDispatch, FileMetadataSource, MqttJobSource, MqttPrinterSource, Publish, SlicingProgress } from './types.ts';

export interface MqttServiceDeps {
  config: ConfigSlice<MqttSections>;
  events: EventBus;
  printer: MqttPrinterSource;
  jobs: MqttJobSource;
  /** The printed file's metadata (`publish.metadataActive`). */
  fileMetadata?: FileMetadataSource;
  dispatch: ApiDispatch;
  clock: Clock;
  logger: Logger;
  version: string;
}

/** Settings that shape the session: a change to any of them reconnects (the plugin does the same on save). */
function sessionKey(c: Pick<Config, MqttSections>): string {
  return JSON.stringify([c.plugins.mqtt, c.plugins.homeassistant, c.server.uuid, c.appearance.name, c.webcam.snapshot]);
}

class Session {
  readonly conn: BrokerConnection;
  private readonly publisher: OctoPrintMqttPublisher;
  private readonly hass: HassState | undefined;
  private readonly bridge: ApiBridge | undefined;
  private readonly control: HassControl | undefined;

  constructor(readonly s: MqttSettings, tls: { ca?: Buffer; cert?: Buffer; key?: Buffer }, private readonly deps: MqttServiceDeps,
    private readonly topics: ReadonlyMap<string, ReadonlySet<(payload: string) => void>>) {
    const { logger } = deps;
    const publish: Publish = (topic, payload, opts = {}) => {
      let body: string | Buffer;
      try {
        body = typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload);
      } catch (err) {
        logger.warn({ err, topic }, 'MQTT: payload cannot be sent as JSON');
        return;
      }
      this.conn.publish({ topic, payload: body, qos: opts.qos ?? s.stateQos, retain: opts.retain ?? s.retain, correlationData: opts.correlationData, response: opts.response });
    };
    const now = () => deps.clock.now();
    this.hass = s.discovery ? new HassState(s, publish, deps.printer, deps.jobs, now) : undefined;
    this.publisher = new OctoPrintMqttPublisher(s, publish, deps.jobs, () => this.hass?.printingData() ?? {}, now, deps.fileMetadata);
    this.bridge = s.api.enabled ? new ApiBridge(s, publish, deps.dispatch, logger, () => this.conn.queuedResponses) : undefined;
    this.control = s.discovery ? new HassControl(s, publish, deps.dispatch, () => this.snapshot(), (jpeg) => this.hass?.camera(jpeg), logger) : undefined;
    const subscriptions = [this.bridge?.requestTopic, this.control?.topicFilter, ...topics.keys()].filter((t): t is string => t !== undefined);
    const birth: OutMessage | undefined = s.topics.lw ? { topic: s.topics.lw, payload: 'connected', qos: 1, retain: s.lwRetain } : undefined;
    this.conn = new BrokerConnection({
      url: s.url, client: { ...s.client, ...tls }, maxPacket: s.maxPacket, queueSize: s.queueSize, reconnectMinMs: s.reconnectMinMs, reconnectMaxMs: s.reconnectMaxMs,
      subscriptions, birth, logger,
    }, {
      onConnect: (first) => {
        if (first) this.publisher.onFirstConnect();
        this.discovery();
      },
      onMessage: (topic, payload, packet) => this.message(topic, payload, packet),
      onOversized: (topic, size, packet) => {
        if (this.bridge && topic === this.bridge.requestTopic) this.bridge.oversized(size, packet);
        else logger.warn({ topic, size, maxPacket: s.maxPacket }, 'MQTT: message over the packet cap skipped unread');
      },
    });
  }

  start(): void {
    this.hass?.start();
    this.conn.start();
  }

  async stop(): Promise<void> {
    this.publisher.stop();
    this.hass?.stop();
    const lw = this.s.topics.lw;
    await this.conn.stop(lw ? { topic: lw, payload: 'disconnected', qos: 1, retain: this.s.lwRetain } : undefined);
  }

  discovery(): void {
    if (!this.s.discovery) return;
    const c = this.deps.config.get();
    for (const m of discoveryMessages(this.s, { heaters: this.deps.printer.heaters(), camera: c.webcam.snapshot !== '', version: this.deps.version })) {
      this.conn.publish({ topic: m.topic, payload: JSON.stringify(m.payload), qos: this.s.stateQos, retain: this.s.retain });
    }
  }

  event(name: string, payload: unknown): void {
    this.publisher.event(name, payload);
    this.hass?.event(name, payload);
    if (name === 'Connected' || name === 'PrinterProfileModified') this.discovery();
  }

  temperature(entry: Parameters<OctoPrintMqttPublisher['temperature']>[0]): void {
    this.publisher.temperature(entry);
  }

  reply(line: string): void {
    this.publisher.reply(line);
  }

  slicing(p: SlicingProgress): void {
    this.publisher.slicing(p);
  }

  private message(topic: string, payload: Buffer, packet: IPublishPacket): void {
    const own = this.topics.get(topic);
    if (own) for (const fn of own) fn(payload.toString('utf8'));
    if (this.bridge && topic === this.bridge.requestTopic) this.bridge.handle(payload, packet);
    else this.control?.handle(topic, payload);
  }

  private async snapshot(): Promise<Buffer> {
    const w = this.deps.config.get().webcam;
    const res = await fetch(w.snapshot, { signal: AbortSignal.timeout(w.snapshotTimeout * 1000) });
    if (!res.ok) throw new Error(`snapshot answered ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }
}

export class MqttService {
  private session: Session | undefined;
  private key = '';
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: Array<() => void> = [];
  private pending: Array<(s: Session) => void> = [];
  /** Topics other services follow (power devices, src/power/): exact topic → handlers, kept across sessions. */
  private readonly topics = new Map<string, Set<(payload: string) => void>>();

  constructor(private readonly deps: MqttServiceDeps) {}

  /** A topic pair for a device on this broker session (power control's MQTT provider). */
  readonly topicLink = {
    connected: (): boolean => this.session?.conn.connected ?? false,
    publish: (topic: string, payload: string): void => this.session?.conn.publish({ topic, payload, qos: 1, retain: false }),
    subscribe: (topic: string, fn: (payload: string) => void): (() => void) => {
      let set = this.topics.get(topic);
      if (!set) this.topics.set(topic, set = new Set());
      set.add(fn);
      this.session?.conn.subscribe(topic);
      return () => { set.delete(fn); };
    },
  };

  async start(): Promise<void> {
    const { events, printer, config } = this.deps;
    events.onAny('mqtt', (name, payload) => this.later((s) => s.event(name, payload)));
    this.unsubscribe.push(
      () => events.removeOwner('mqtt'),
      printer.subscribe({ temperature: (entry) => this.later((s) => s.temperature(entry)) }),
      printer.watchReplies((line) => { if (line.startsWith('echo:busy: paused')) this.later((s) => s.reply(line)); }),
      config.onChange((now) => { if (sessionKey(now) !== this.key) this.restart(); }),
    );
    this.restart();
    await this.chain;
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    // What was emitted last (Shutdown) still goes out, ahead of `disconnected`.
    const session = this.session;
    for (const w of this.pending.splice(0)) if (session) w(session);
    this.chain = this.chain.then(() => this.close());
    await this.chain;
  }

  slicingProgress(p: SlicingProgress): void {
    this.later((s) => s.slicing(p));
  }

  /**
   * Whoever emits (the printer's reply handling, above all) pays for one array push: building payloads and topics
   * happens on a later turn of the event loop. Bounded, so a stalled loop cannot make it grow without end.
   */
  private later(work: (s: Session) => void): void {
    if (!this.session) return;
    if (this.pending.length >= 10_000) return;
    this.pending.push(work);
    if (this.pending.length === 1) {
      setImmediate(() => {
        const batch = this.pending;
        this.pending = [];
        for (const w of batch) {
          const s = this.session;
          if (!s) return;
          try {
            w(s);
          } catch (err) {
            this.deps.logger.error({ err }, 'MQTT: publishing failed');
          }
        }
      });
    }
  }

  /** For tests and the benchmark: the broker link's state. */
  status(): { enabled: boolean; connected: boolean; queued: number; dropped: number; published: number; base: string | null } {
    const conn = this.session?.conn;
    return { enabled: this.session !== undefined, connected: conn?.connected ?? false, queued: conn?.queued ?? 0,
      dropped: conn?.stats.dropped ?? 0, published: conn?.stats.published ?? 0, base: this.session?.s.base ?? null };
  }

  private restart(): void {
    this.chain = this.chain.then(async () => {
      await this.close();
      const c = this.deps.config.get();
      this.key = sessionKey(c);
      const s = mqttSettings(c);
      if (!s) {
        this.deps.logger.info('MQTT: off (no broker configured)');
        return;
      }
      try {
        const [ca, cert, key] = await Promise.all([s.tlsFiles.ca, s.tlsFiles.cert, s.tlsFiles.key].map((f) => (f ? readFile(f) : undefined)));
        this.session = new Session(s, { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) }, this.deps, this.topics);
        this.session.start();
        this.deps.logger.info({ url: s.url, base: s.base }, 'MQTT: publishing');
      } catch (err) {
        this.deps.logger.error({ err }, 'MQTT: cannot start (TLS files?)');
      }
    }).catch((err: unknown) => this.deps.logger.error({ err }, 'MQTT: restart failed'));
  }

  private async close(): Promise<void> {
    const old = this.session;
    this.session = undefined;
    if (old) await old.stop();
  }
}
