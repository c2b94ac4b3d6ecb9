// The HTTP API over MQTT: a request on <base>api/request runs through the same routes, validation and permission
// checks as HTTP (the dispatch main.ts builds) and is answered on <base>api/response/<id>, a reply topic the client
// chose, or the MQTT 5 response topic with its correlation data.
import type { IPublishPacket } from 'mqtt';
import type { Logger } from '../core/logger.ts';
import { normaliseApiPath } from '../core/api-path.ts';
import { isPlain } from '../core/plain.ts';
import { RESPONSE_QUEUE_LIMIT } from './connection.ts';
import type { MqttSettings } from './settings.ts';
import type { ApiDispatch, Publish } from './types.ts';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);
const MAX_ID = 128;
const MAX_TOPIC = 1024;
/** Seconds a shed request is told to wait (`retryAfter` in a 503 body, as HTTP's Retry-After). */
const RETRY_AFTER_S = 1;
/** Queued answers past which requests are shed: well below the limit where reading from the broker waits. */
const SHED_AT = RESPONSE_QUEUE_LIMIT / 2;

export class ApiBridge {
  private inFlight = 0;

  constructor(
    private readonly s: MqttSettings,
    private readonly publish: Publish,
    private readonly dispatch: ApiDispatch,
    private readonly logger: Logger,
    /** Answers waiting to be sent: past SHED_AT a request is answered 503 at once instead of run. */
    private readonly queuedAnswers: () => number = () => 0,
  ) {}

  get requestTopic(): string {
    return `${this.s.base}api/request`;
  }

  private get responseBase(): string {
    return `${this.s.base}api/response`;
  }

  /** A reply topic is honoured unless it has wildcards or points into this host's own topics outside api/response. */
  private usableReplyTopic(topic: unknown): topic is string {
    if (typeof topic !== 'string' || topic === '' || topic.length > MAX_TOPIC || /[+#\0]/.test(topic)) return false;
    return !topic.startsWith(this.s.base) || topic.startsWith(`${this.responseBase}/`);
  }

  private replies(packet: IPublishPacket) {
    const props = packet.properties;
    const correlationData = props?.correlationData;
    const v5Reply = this.usableReplyTopic(props?.responseTopic) ? props?.responseTopic : undefined;
    const reply = (topic: string | undefined, id: unknown, status: number, body: unknown, encoding?: string) => {
      this.publish(v5Reply ?? topic ?? this.responseBase, { id, status, body, ...(encoding ? { encoding } : {}) },
        { retain: false, qos: 1, correlationData, response: true });
    };
    const fail = (topic: string | undefined, id: unknown, status: number, error: string) => reply(topic, id, status,
      status === 503 ? { error, retryAfter: RETRY_AFTER_S } : { error });
    return { v5Reply, reply, fail };
  }

  private get tooLarge(): string {
    return `Request larger than ${this.s.api.maxPayload} bytes`;
  }

  /**
   * A request over the packet cap, skipped unread (packet-cap.ts): the same 413 as one read and then refused, on
   * `<base>api/response` (its id was in the part never read) or its MQTT 5 response topic.
   */
  oversized(size: number, packet: IPublishPacket): void {
    this.logger.warn({ size, maxPacket: this.s.maxPacket }, 'MQTT: API request over the packet cap skipped unread');
    this.replies(packet).fail(undefined, null, 413, this.tooLarge);
  }

  handle(payload: Buffer, packet: IPublishPacket): void {
    const { v5Reply, reply, fail } = this.replies(packet);
    if (payload.length > this.s.api.maxPayload) return fail(undefined, null, 413, this.tooLarge);
    let req: unknown;
    try {
      req = JSON.parse(payload.toString('utf8'));
    } catch {
      return fail(undefined, null, 400, 'Malformed JSON request');
    }
    if (!isPlain(req)) return fail(undefined, null, 400, 'The request must be a JSON object');
    const id = req.id;
    const idOk = (typeof id === 'string' && id !== '' && id.length <= MAX_ID && !/[/+#\0]/.test(id)) || (typeof id === 'number' && Number.isSafeInteger(id));
    if (!idOk && !v5Reply && !this.usableReplyTopic(req.replyTo)) {
      return fail(undefined, id ?? null, 400, 'id must be a non-empty string without / + # (at most 128 characters) or an integer');
    }
    const topic = this.usableReplyTopic(req.replyTo) ? req.replyTo : idOk ? `${this.responseBase}/${String(id)}` : undefined;
    const method = typeof req.method === 'string' ? req.method.toUpperCase() : '';
    if (!METHODS.has(method)) return fail(topic, id, 400, `method must be one of ${[...METHODS].join(', ')}`);
    // Confined to /api/ once normalised as the router will see it (dot segments, encoded dots, backslashes).
    const path = normaliseApiPath(req.path);
    if (path === undefined) return fail(topic, id, 400, 'path must be an API path under /api/ (no dot segments)');
    if (req.apikey !== undefined && typeof req.apikey !== 'string') return fail(topic, id, 400, 'apikey must be a string');
    if (this.inFlight >= this.s.api.concurrency) return fail(topic, id, 503, 'Too many API requests in flight, try again');
    if (this.queuedAnswers() >= SHED_AT) return fail(topic, id, 503, 'Too many API answers waiting to be sent, try again');

    this.inFlight++;
    this.dispatch({ method, path, body: req.body, apikey: req.apikey as string | undefined })
      .then((res) => reply(topic, id, res.status, res.body, res.encoding), (err: unknown) => {
        this.logger.error({ err, path }, 'MQTT: API request failed');
        fail(topic, id, 500, 'Internal error');
      })
      .finally(() => { this.inFlight--; });
  }
}
