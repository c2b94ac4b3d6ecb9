// Broker connection: one MQTT.js client at a time, reconnect with doubling back-off, and a bounded outbox that keeps
// what is produced while the broker is away (retained state coalesced per topic) and flushes it on reconnect.
import type * as Mqtt from 'mqtt';
import type { IClientOptions, IPublishPacket, MqttClient } from 'mqtt';
import type { Duplex } from 'node:stream';
import type { Logger } from '../core/logger.ts';
import { capIncoming, oversizedPacket, PacketCap } from './packet-cap.ts';

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
  /** An answer to an API request: queued apart from state and events, never dropped (see `responses`). */
  response?: boolean;
}

/**
 * Answers queued beyond this make the connection stop reading from the broker until they are sent: every request
 * read gets its answer, and a flood cannot grow memory (the broker holds, or by its own limits drops, the rest).
 */
export const RESPONSE_QUEUE_LIMIT = 5000;

export interface ConnectionOptions {
  url: string;
  client: IClientOptions;
  /** Most messages kept while offline (0: none). */
  queueSize: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** Topics (QoS 1) subscribed after every connect. */
  subscriptions: string[];
  /**
   * Largest packet (remaining length) taken from the broker whole; a larger PUBLISH is skipped as it streams in and
   * reported through `onOversized` (packet-cap.ts).
   */
  maxPacket: number;
  /** Sent first on every connect, ahead of anything queued (the `connected` status). */
  birth?: OutMessage;
  logger: Logger;
}

export interface ConnectionHandlers {
  /** After every successful connect (the outbox is flushed right after); `first` only for the first one. */
  onConnect(first: boolean): void;
  onMessage(topic: string, payload: Buffer, packet: IPublishPacket): void;
  /** A PUBLISH over `maxPacket` arrived and was skipped unread (`size` bytes); the packet holds its topic and properties. */
  onOversized(topic: string, size: number, packet: IPublishPacket): void;
}

/** Bytes the socket may hold before publishing waits: a slow broker must not grow memory without bound. */
const SOCKET_HIGH_WATER = 1024 * 1024;

export class BrokerConnection {
  private client: MqttClient | undefined;
  /** State and events: `queueSize` messages at most, whatever requests do. */
  private readonly outbox = new Map<string, OutMessage>();
  /** API answers, in order: their own budget, so a request flood never displaces the host's state messages. */
  private responses: OutMessage[] = [];
  private readingPaused: { promise: Promise<void>; resume: () => void } | undefined;
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
    return this.outbox.size + this.responses.length;
  }

  /** API answers waiting to be sent (the bridge sheds requests with 503 before this reaches the limit). */
  get queuedResponses(): number {
    return this.responses.length;
  }

  /** While too many answers wait, reading from the broker waits too (packet-cap.ts asks before each chunk). */
  private readGate(): Promise<void> | undefined {
    if (this.responses.length < RESPONSE_QUEUE_LIMIT || this.stopped) return undefined;
    if (!this.readingPaused) {
      let resume = () => {};
      const promise = new Promise<void>((r) => { resume = r; });
      this.readingPaused = { promise, resume };
    }
    return this.readingPaused.promise;
  }

  private maybeResumeReading(): void {
    if (this.readingPaused && (this.responses.length < RESPONSE_QUEUE_LIMIT / 2 || this.stopped || !this.client)) {
      this.readingPaused.resume();
      this.readingPaused = undefined;
    }
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
    if (msg.response) {
      this.responses.push(msg.producedAt === undefined ? { ...msg, producedAt: Date.now() } : msg);
      this.scheduleDrain();
      return;
    }
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
      client = connect(this.opts.url, { ...this.opts.client, reconnectPeriod: 0, connectTimeout: 10_000, resubscribe: false, manualConnect: true });
      // MQTT.js buffers each packet whole before its handlers see it, and has no cap of its own for MQTT 3.1/3.1.1:
      // every stream it builds for this client gets the cap between the socket and its parser. (The builder is
      // private in MQTT.js's typings; test/mqtt/api-hardening.test.ts fails should it stop being used.)
      const c = client as unknown as { streamBuilder: (cl: MqttClient) => Duplex };
      const build = c.streamBuilder;
      const version = this.opts.client.protocolVersion ?? 4;
      c.streamBuilder = (cl) => capIncoming(build(cl), new PacketCap(this.opts.maxPacket, version, () => this.readGate()));
      client.connect();
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
      this.maybeResumeReading();
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
        const oversized = oversizedPacket(payload);
        if (oversized !== undefined) this.handlers.onOversized(topic, oversized, packet);
        else this.handlers.onMessage(topic, payload, packet);
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
    // State and events first (few, and what dashboards show), then answers in the order they were made.
    for (const [key, msg] of this.outbox) {
      if (this.socketFull(client)) return;
      this.outbox.delete(key);
      this.send(client, msg);
    }
    let i = 0;
    for (; i < this.responses.length; i++) {
      if (this.socketFull(client)) break;
      this.send(client, this.responses[i]!);
    }
    this.responses = i === this.responses.length ? [] : this.responses.slice(i);
    this.maybeResumeReading();
  }

  private socketFull(client: MqttClient): boolean {
    if (client.stream.writableLength <= SOCKET_HIGH_WATER) return false;
    // The broker reads slower than we produce: keep the rest queued (bounded) and look again shortly.
    setTimeout(() => this.scheduleDrain(), 20).unref();
    return true;
  }

  private send(client: MqttClient, msg: OutMessage): void {
    // MQTT 5 only: the production time lets consumers (and the scale benchmark) see how long a message travelled.
    const properties = this.opts.client.protocolVersion === 5
      ? { userProperties: { ts: String(msg.producedAt ?? Date.now()) }, ...(msg.correlationData ? { correlationData: msg.correlationData } : {}) }
      : undefined;
    client.publish(msg.topic, msg.payload, { qos: msg.qos, retain: msg.retain, ...(properties ? { properties } : {}) });
    this.stats.published++;
  }
}
