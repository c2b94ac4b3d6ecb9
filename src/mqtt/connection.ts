// Broker connection: one MQTT.js client at a time, reconnect with doubling back-off, and a bounded outbox that keeps
// what is produced while the broker is away (retained state coalesced per topic) and flushes it on reconnect.
import type * as Mqtt from 'mqtt';
import type { IClientOptions, IPublishPacket, MqttClient } from 'mqtt';
import type { Logger } from '../core/logger.ts';

/**
 * MQTT.js with its dependencies is ≈ 450 KB of code (a fifth of the server bundle): loaded with the first connect,
 * so a server with MQTT off (the default) never compiles or holds it (bench/memory.ts).
 */
let mqttLibrary: Promise<typeof Mqtt> | undefined;
const loadMqtt = (): Promise<typeof Mqtt> => (mqttLibrary ??= import('mqtt'));

export interface OutMessage {
  topic: string;
  payload: string | Buffer;
  qos: 0 | 1;
  retain: boolean;
  /** MQTT 5 correlation data of an API response. */
  correlationData?: Buffer;
  /** When it was produced (ms since the epoch); MQTT 5 messages carry it as the user property `ts`. */
  producedAt?: number;
}

export interface ConnectionOptions {
  url: string;
  client: IClientOptions;
  /** Most messages kept while offline (0: none). */
  queueSize: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Topics (QoS 1) subscribed after every connect. */
  subscriptions: string[];
  /** Sent first on every connect, ahead of anything queued (the `connected` status). */
  birth?: OutMessage;
  logger: Logger;
}

export interface ConnectionHandlers {
  /** After every successful connect (the outbox is flushed right after); `first` only for the first one. */
  onConnect(first: boolean): void;
  onMessage(topic: string, payload: Buffer, packet: IPublishPacket): void;
}

/** Bytes the socket may hold before publishing waits: a slow broker must not grow memory without bound. */
const SOCKET_HIGH_WATER = 1024 * 1024;

export class BrokerConnection {
  private client: MqttClient | undefined;
  private readonly outbox = new Map<string, OutMessage>();
  private seq = 0;
  private delayMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private drainScheduled = false;
  private stopped = false;
  private everConnected = false;
  private lastError = '';
  readonly stats = { published: 0, dropped: 0, connects: 0 };

  constructor(private readonly opts: ConnectionOptions, private readonly handlers: ConnectionHandlers) {
    this.delayMs = opts.reconnectMinMs;
  }

  get connected(): boolean {
    return this.client?.connected === true;
  }

  get queued(): number {
    return this.outbox.size;
  }

  start(): void {
    this.attempt();
  }

  /** Adds a topic (QoS 1) to the subscriptions: at once when connected, and after every reconnect. */
  subscribe(topic: string): void {
    if (this.opts.subscriptions.includes(topic)) return;
    this.opts.subscriptions.push(topic);
    if (this.client?.connected) this.client.subscribe(topic, { qos: 1 }, (err) => { if (err) this.opts.logger.warn({ err, topic }, 'MQTT: subscribe failed'); });
  }

  /** Never blocks and never throws: the message goes to the outbox, sent on the next turn of the event loop. */
  publish(msg: OutMessage): void {
    if (this.stopped) return;
    // Retained state: only the newest value per topic matters, so it replaces the queued one (and moves to the end).
    const key = msg.retain ? `r ${msg.topic}` : `n ${this.seq++}`;
    this.outbox.delete(key);
    this.outbox.set(key, msg.producedAt === undefined ? { ...msg, producedAt: Date.now() } : msg);
    if (this.outbox.size > Math.max(this.opts.queueSize, 1)) this.dropOne();
    this.scheduleDrain();
  }

  /** Publishes `last` (when connected) and disconnects; bounded in time so a dead broker cannot hold up shutdown. */
  async stop(last?: OutMessage): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    // Its own listeners stay: MQTT.js clears its connect timer (10 s) on its 'close', and our handlers see `stopped`.
    await new Promise<void>((resolve) => {
      // Still connecting (a broker that takes the connection and never answers): nothing to say goodbye to.
      if (!client.connected) return void client.end(true, {}, () => resolve());
      // A second end() is ignored while the first is under way: the socket itself is closed.
      const timer = setTimeout(() => { client.stream.destroy(); resolve(); }, 1500);
      const end = () => client.end(false, {}, () => { clearTimeout(timer); resolve(); });
      if (client.connected && last) {
        this.flushNow(client);
        client.publish(last.topic, last.payload, { qos: last.qos, retain: last.retain }, end);
      } else {
        end();
      }
    });
  }

  private dropOne(): void {
    // Events go first; retained state survives as long as there is anything else to drop.
    for (const [key] of this.outbox) {
      if (key.startsWith('n ')) {
        this.outbox.delete(key);
        this.stats.dropped++;
        return;
      }
    }
    const first = this.outbox.keys().next();
    if (!first.done) {
      this.outbox.delete(first.value);
      this.stats.dropped++;
    }
  }

  private attempt(): void {
    if (this.stopped) return;
    loadMqtt().then((lib) => this.connectWith(lib.connect ?? lib.default.connect), (err: unknown) => {
      this.noteError(err);
      this.retry();
    });
  }

  private connectWith(connect: typeof Mqtt.connect): void {
    if (this.stopped) return;
    const { logger } = this.opts;
    let client: MqttClient;
    try {
      client = connect(this.opts.url, { ...this.opts.client, reconnectPeriod: 0, connectTimeout: 10_000, resubscribe: false });
    } catch (err) {
      this.noteError(err);
      this.retry();
      return;
    }
    this.client = client;
    let closed = false;
    const onDown = () => {
      if (closed || this.stopped || this.client !== client) return;
      closed = true;
      // Not removeAllListeners(): that took MQTT.js's own 'close' listener too, the one that clears its connect timer,
      // so every failed attempt left a 10 s timer behind, which held a stopping server up (MQTT.js issue #1155).
      client.end(true);
      this.client = undefined;
      if (this.everConnected) logger.info({ url: this.opts.url }, 'MQTT: connection lost, reconnecting');
      this.retry();
    };
    client.on('connect', () => {
      this.delayMs = this.opts.reconnectMinMs;
      this.lastError = '';
      this.stats.connects++;
      const first = !this.everConnected;
      this.everConnected = true;
      logger.info({ url: this.opts.url }, 'MQTT: connected');
      const birth = this.opts.birth;
      if (birth) client.publish(birth.topic, birth.payload, { qos: birth.qos, retain: birth.retain });
      if (this.opts.subscriptions.length > 0) {
        client.subscribe(this.opts.subscriptions, { qos: 1 }, (err) => { if (err) logger.warn({ err }, 'MQTT: subscribe failed'); });
      }
      try {
        this.handlers.onConnect(first);
      } catch (err) {
        logger.error({ err }, 'MQTT: connect handler failed');
      }
      this.scheduleDrain();
    });
    client.on('message', (topic, payload, packet) => {
      try {
        this.handlers.onMessage(topic, payload, packet);
      } catch (err) {
        logger.error({ err, topic }, 'MQTT: message handler failed');
      }
    });
    client.on('error', (err) => {
      this.noteError(err);
      if (!client.connected) onDown();
    });
    client.on('close', onDown);
  }

  private noteError(err: unknown): void {
    const text = err instanceof Error ? err.message : String(err);
    // A broker that stays away would otherwise log the same line at every retry.
    if (text !== this.lastError) this.opts.logger.warn({ url: this.opts.url, err: text }, 'MQTT: cannot connect');
    this.lastError = text;
  }

  private retry(): void {
    if (this.stopped) return;
    clearTimeout(this.retryTimer);
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.opts.reconnectMaxMs);
    this.retryTimer = setTimeout(() => this.attempt(), delay);
    this.retryTimer.unref();
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    setImmediate(() => {
      this.drainScheduled = false;
      const client = this.client;
      if (client?.connected) this.flushNow(client);
    });
  }

  private flushNow(client: MqttClient): void {
    for (const [key, msg] of this.outbox) {
      if (client.stream.writableLength > SOCKET_HIGH_WATER) {
        // The broker reads slower than we produce: keep the rest queued (bounded) and look again shortly.
        setTimeout(() => this.scheduleDrain(), 20).unref();
        return;
      }
      this.outbox.delete(key);
      // MQTT 5 only: the production time lets consumers (and the scale benchmark) see how long a message travelled.
      const properties = this.opts.client.protocolVersion === 5
        ? { userProperties: { ts: String(msg.producedAt ?? Date.now()) }, ...(msg.correlationData ? { correlationData: msg.correlationData } : {}) }
        : undefined;
      client.publish(msg.topic, msg.payload, { qos: msg.qos, retain: msg.retain, ...(properties ? { properties } : {}) });
      this.stats.published++;
    }
  }
}
