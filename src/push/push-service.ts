// Push channel service: the set of clients, their authentication, and the fan-out of status (`history`/`current`),
// events, plugin and slicing messages with OctoPrint's permission rules and per-client throttling.
import type { Server as HttpServer } from 'node:http';
import type { EventName } from '../core/events.ts';
import type { Logger } from '../core/logger.ts';
import { attachPushTransports, MAX_CLIENT_MESSAGE, type AttachedTransports, type PushConnection } from './transports.ts';
import { PushClient, DEFAULT_LIMITS, type ClientLimits } from './push-client.ts';
import { StatusMonitor, stateKey, type StatusDelta } from './status-monitor.ts';
import { noJob, offlinePrinter } from './sources.ts';
import { parseSubscription, shareKey, wantsName } from './subscription.ts';
import { connectedPayload, currentPayload, encode, historyPayload, isPushedEvent, type OutMessage } from './messages.ts';
import { EventFanout } from './event-fanout.ts';
import { AddressCap, PUSH_CAP_CLOSE_CODE } from './address-cap.ts';
import type { PushServiceDeps, ReauthReason, TimelapseSource } from './push-deps.ts';

// The channel's ports live in push-deps.ts; the host imports them from here.

let instances = 0;
/** Sessions of connected clients are touched this often so they do not expire while the socket is open. */
const SESSION_KEEPALIVE_MS = 60_000;
/** How long closing connections may take to deliver what they were sent (at shutdown). */
const CLOSE_GRACE_MS = 1000;

export class PushService {
  private readonly clients = new Set<PushClient>();
  private readonly addressCap: AddressCap;
  private readonly monitor: StatusMonitor;
  private readonly limits: ClientLimits;
  private readonly intervalMs: number;
  private readonly logger: Logger;
  private transports: AttachedTransports | undefined;
  private timer: NodeJS.Timeout | undefined;
  private keepalive: NodeJS.Timeout | undefined;
  private unsubscribers: Array<() => void> = [];
  private readonly fanout = new EventFanout(this.clients);
  private stateFlush: NodeJS.Immediate | undefined;
  /** The timelapse config and render under way, for the `timelapse` message on registration (none: `null`). */
  private readonly timelapse: TimelapseSource | undefined;
  /** Event-bus owner name, unique per instance (tests run several channels on one bus). */
  private readonly owner = `push#${++instances}`;

  constructor(private readonly deps: PushServiceDeps) {
    this.logger = deps.logger;
    this.timelapse = deps.timelapse;
    this.addressCap = new AddressCap(() => deps.config.get().server.connections, deps.logger);
    this.limits = { ...DEFAULT_LIMITS, ...deps.limits };
    this.intervalMs = deps.intervalMs ?? 500;
    this.monitor = new StatusMonitor(deps.printer ?? offlinePrinter, deps.jobs ?? noJob, () => deps.clock.now(),
      () => deps.config.get().temperature.cutoff * 60);
    // A state change goes out on its own, after the printer's synchronous work (several changes in one turn: in order).
    this.monitor.onCut = () => {
      this.stateFlush ??= setImmediate(() => {
        this.stateFlush = undefined;
        this.tick();
      });
    };
  }

  get clientCount(): number {
    return this.clients.size;
  }

  async start(): Promise<void> {
    const { events, access } = this.deps;
    this.monitor.start();
    events.onAny(this.owner, (name, payload) => this.onEvent(name, payload));
    this.unsubscribers.push(() => events.removeOwner(this.owner));
    this.unsubscribers.push(access.users.onUserChanged((name) => this.onUserChanged(name)));
    if (access.users.onGroupChanged) {
      this.unsubscribers.push(access.users.onGroupChanged((key) => { if (key === 'guests') this.onGuestsChanged(); }));
    }
    if (access.sessions.onEnd) {
      this.unsubscribers.push(access.sessions.onEnd((s, reason) => this.onSessionEnded(s.id, reason)));
    }
  }

  /** Serves `/sockjs` (all SockJS transports) and `/sockjs/websocket` on the given HTTP server. */
  /** `othersUpgrade`: upgrade paths another edge serves on the same server (Moonraker's /websocket), left alone. */
  attach(server: HttpServer, othersUpgrade: (path: string) => boolean = () => false): void {
    this.transports = attachPushTransports(server, {
      logger: this.logger,
      othersUpgrade,
      allowCrossOrigin: () => this.deps.config.get().api.allowCrossOrigin,
      onConnection: (conn) => this.open(conn),
    });
  }

  /**
   * Closes every push connection (before the HTTP server closes: upgraded sockets would keep it open). Events still
   * waiting for their batch go out first, so clients see `Shutdown`, and the sockets get a moment to receive them.
   */
  async detach(): Promise<void> {
    const transports = this.transports;
    this.transports = undefined;
    if (!transports) return;
    this.fanout.flushNow();
    await transports.close(CLOSE_GRACE_MS);
  }

  async stop(): Promise<void> {
    await this.detach();
    if (this.timer) clearInterval(this.timer);
    if (this.keepalive) clearInterval(this.keepalive);
    this.fanout.stop();
    if (this.stateFlush) clearImmediate(this.stateFlush);
    this.timer = this.keepalive = this.stateFlush = undefined;
    for (const u of this.unsubscribers) u();
    this.unsubscribers = [];
    this.monitor.stop();
    this.clients.clear();
  }

  /** A plugin push message (`{"plugin": {"plugin": id, "data": ...}}`) for every client allowed to see it. */
  sendPlugin(plugin: string, data: unknown, opts: { permissions?: string[] } = {}): void {
    const text = encode('plugin', { plugin, data });
    this.broadcastGated(text, opts.permissions ?? ['STATUS'], (c) => wantsName(c.subscription.plugins, plugin));
  }

  /** Slicing progress for the slicing feature: `{slicer, source_location, source_path, dest_location, dest_path, progress}`. */
  slicingProgress(p: { slicer: string; source_location: string; source_path: string; dest_location: string; dest_path: string; progress: number }): void {
    this.broadcastGated(encode('slicingProgress', p), ['STATUS'], () => true);
  }

  /** The timelapse config changed: `{"timelapse": null | {type, options}}` to every registered client. */
  timelapseConfig(payload: unknown): void {
    this.broadcastGated(encode('timelapse', payload), ['STATUS'], () => true);
  }

  /** `{"renderProgress": {"progress": percent}}` while a timelapse renders. */
  renderProgress(progress: number): void {
    // Queued with the events, so clients see MovieRendering before the first progress and MovieDone after the last.
    this.fanout.message('renderProgress', encode('renderProgress', { progress }));
  }

  // --- connections ----------------------------------------------------------------------------------------------------

  private open(conn: PushConnection): void {
    if (!this.addressCap.admit(conn.remoteAddress)) {
      conn.close(PUSH_CAP_CLOSE_CODE, 'Too many push connections from this address');
      return;
    }
    const client = new PushClient(conn, this.deps.access.anonymous(), this.limits, (c, reason) => this.drop(c, reason));
    this.clients.add(client);
    if (this.timer === undefined) this.startTicking();
    conn.onMessage((text) => {
      try {
        this.onClientMessage(client, text);
      } catch (err) {
        this.logger.warn({ err, client: client.id }, 'push: client message failed');
      }
    });
    conn.onClose(() => this.closed(client));
    client.send(encode('connected', connectedPayload({ configHash: this.deps.configHash(), debug: false })));
    this.logger.debug({ client: client.id, remoteAddress: conn.remoteAddress, transport: conn.transport }, 'push client opened');
    this.deps.events.emit('ClientOpened', { remoteAddress: conn.remoteAddress });
    if (client.identity.has('STATUS')) this.register(client);
  }

  private closed(client: PushClient): void {
    if (!this.clients.delete(client)) return;
    this.addressCap.release(client.remoteAddress);
    client.closed = true;
    if (this.clients.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      clearInterval(this.keepalive);
      this.timer = this.keepalive = undefined;
    }
    this.logger.debug({ client: client.id }, 'push client closed');
    this.deps.events.emit('ClientClosed', { remoteAddress: client.remoteAddress });
  }

  private drop(client: PushClient, reason: string): void {
    if (client.closed) return;
    this.logger.warn({ client: client.id, remoteAddress: client.remoteAddress, reason, buffered: client.conn.bufferedBytes() },
      'push: dropping a client that fell too far behind');
    client.closed = true;
    client.conn.terminate();
    this.closed(client);
  }

  private register(client: PushClient): void {
    if (client.registered) return;
    client.registered = true;
    if (client.wantsState) this.sendHistory(client);
    client.send(encode('timelapse', this.timelapse?.config() ?? null));
    const rendering = this.timelapse?.rendering();
    if (rendering) client.send(encode('event', { type: 'MovieRendering', payload: rendering }));
  }

  private unregister(client: PushClient): void {
    client.registered = false;
    client.historySent = false;
    client.clearPending();
  }

  private sendHistory(client: PushClient): void {
    client.clearPending();
    const history = this.monitor.history();
    client.lastStateKey = stateKey(history.state as StatusDelta['base']['state']);
    client.send(encode('history', historyPayload(history, client.view())));
    client.historySent = true;
    client.needsCurrent = true;
  }

  // --- client messages ------------------------------------------------------------------------------------------------

  private onClientMessage(client: PushClient, text: string): void {
    if (text.length > MAX_CLIENT_MESSAGE) return this.ignore(client, 'message too large');
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.ignore(client, 'not JSON');
    }
    // SockJS clients may send an already-encoded string inside the frame.
    if (typeof msg === 'string') {
      try { msg = JSON.parse(msg); } catch { return this.ignore(client, 'not JSON'); }
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return this.ignore(client, 'not an object');
    for (const [key, value] of Object.entries(msg)) {
      if (key === 'auth') this.onAuth(client, value);
      else if (key === 'throttle') this.onThrottle(client, value);
      else if (key === 'subscribe') this.onSubscribe(client, value);
      else this.ignore(client, `unknown message type ${key.slice(0, 40)}`);
    }
  }

  private ignore(client: PushClient, why: string): void {
    this.logger.debug({ client: client.id, why }, 'push: ignored client message');
  }

  private onAuth(client: PushClient, value: unknown): void {
    if (typeof value !== 'string') return this.ignore(client, 'auth is not a string');
    const parts = value.split(':');
    if (parts.length !== 2) return this.ignore(client, 'auth is not user:session');
    const [user, sessionId] = parts;
    const identity = sessionId ? this.deps.access.identityForSession(sessionId) : undefined;
    if (!identity || identity.name !== user) {
      this.logger.info({ client: client.id, user }, 'push: auth with an unknown or stale session');
      this.becomeAnonymous(client);
      client.send(encode('reauthRequired', { reason: 'stale' }));
      return;
    }
    client.identity = identity;
    client.authed = true;
    client.sessionId = sessionId;
    client.flushBacklog();
    if (identity.has('STATUS')) this.register(client);
    else this.unregister(client);
    this.deps.events.emit('ClientAuthed', { remoteAddress: client.remoteAddress, username: user });
  }

  private onThrottle(client: PushClient, value: unknown): void {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) return this.ignore(client, 'bad throttle');
    client.throttle = Math.min(value, 1000);
  }

  private onSubscribe(client: PushClient, value: unknown): void {
    const sub = parseSubscription(value);
    if (!sub) return this.ignore(client, 'bad subscribe');
    const wasOn = client.wantsState;
    client.subscription = sub;
    if (!client.registered) return;
    if (!client.wantsState) {
      client.historySent = false;
      client.clearPending();
    } else if (!wasOn) this.sendHistory(client);
  }

  private becomeAnonymous(client: PushClient): void {
    client.identity = this.deps.access.anonymous();
    client.authed = false;
    client.sessionId = undefined;
    if (!client.identity.has('STATUS')) this.unregister(client);
  }

  // --- access changes -------------------------------------------------------------------------------------------------

  private onSessionEnded(sessionId: string, reason: ReauthReason): void {
    for (const c of this.clients) {
      if (c.sessionId !== sessionId) continue;
      this.becomeAnonymous(c);
      c.dropBacklog();
      c.send(encode('reauthRequired', { reason }));
    }
  }

  /** Rights changed: tell the user's sockets, and apply the new rights at once (re-auth not awaited). */
  private onUserChanged(name: string): void {
    for (const c of this.clients) {
      if (c.identity.name !== name || !c.sessionId) continue;
      const next = this.deps.access.identityForSession(c.sessionId);
      if (!next) {
        this.becomeAnonymous(c);
        c.send(encode('reauthRequired', { reason: this.deps.access.users.getUser(name) ? 'modified' : 'removed' }));
        continue;
      }
      c.identity = next;
      if (next.has('STATUS')) this.register(c);
      else this.unregister(c);
      c.send(encode('reauthRequired', { reason: 'modified' }));
    }
  }

  /** The guest group's rights changed: anonymous sockets get the new rights and are told to re-authenticate. */
  private onGuestsChanged(): void {
    for (const c of this.clients) {
      if (c.authed) continue;
      c.identity = this.deps.access.anonymous();
      if (c.identity.has('STATUS')) this.register(c);
      else this.unregister(c);
      c.send(encode('reauthRequired', { reason: 'modified' }));
    }
  }

  private touchSessions(): void {
    for (const c of this.clients) {
      if (c.sessionId && !this.deps.access.identityForSession(c.sessionId)) {
        this.becomeAnonymous(c);
        c.send(encode('reauthRequired', { reason: 'stale' }));
      }
    }
  }

  // --- fan-out --------------------------------------------------------------------------------------------------------

  /** Messages that need permissions: sent if allowed, held for not-yet-authenticated sockets, else dropped. */
  private broadcastGated(text: OutMessage, permissions: string[], wanted: (c: PushClient) => boolean): void {
    for (const c of this.clients) {
      if (!wanted(c)) continue;
      if (permissions.every((p) => c.identity.has(p))) { if (c.keepingUp()) c.send(text); }
      else if (!c.authed) c.hold(text, permissions);
    }
  }

  private onEvent(name: EventName, payload: unknown): void {
    if (name === 'ChartMarked') this.monitor.mark(payload as { type: string; label: string; time?: number });
    if (isPushedEvent(name)) this.fanout.event(name, payload);
  }

  /**
   * The rounds of `current` and the sessions' keepalive run while someone is connected: an idle server without push
   * clients does not wake up for them. What gathered meanwhile (lines, points, cuts) is dropped: a client starts from
   * `history`.
   */
  private startTicking(): void {
    this.monitor.takeCuts();
    this.monitor.tick();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
    this.keepalive = setInterval(() => this.touchSessions(), SESSION_KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /** A round of `current`: the deltas cut at state changes since the last round, then what changed since. */
  private tick(): void {
    try {
      const deltas = this.monitor.takeCuts();
      const delta = this.monitor.tick();
      if (delta) deltas.push(delta);
      const now = this.deps.clock.monotonic();
      const shared = new Map<StatusDelta, Map<string, OutMessage>>();
      let snapshot: StatusDelta | undefined;
      for (const c of this.clients) {
        if (!c.registered || !c.historySent || !c.wantsState || !c.keepingUp()) continue;
        for (const d of deltas) c.addDelta(d);
        if (deltas.length === 0 && c.needsCurrent && !c.hasPending) c.addDelta(snapshot ??= this.monitor.snapshot());
        const due = c.takeDue(now, this.intervalMs);
        if (!due) continue;
        for (const group of due) {
          if (c.closed) break;
          c.send(this.currentText(c, group, shared));
        }
      }
    } catch (err) {
      this.logger.error({ err }, 'push: status tick failed');
    }
  }

  /** Clients sent the same single delta through the same filters share one serialisation. */
  private currentText(c: PushClient, due: StatusDelta[], shared: Map<StatusDelta, Map<string, OutMessage>>): OutMessage {
    const view = c.view();
    if (due.length === 1) {
      const lk = shareKey(view.logs), mk = shareKey(view.messages);
      // A pattern's key is its text: JSON keeps two of them apart whatever they contain.
      const key = !view.terminal ? 'n' : lk.length === 1 && mk.length === 1 ? `t${lk}${mk}` : `t${JSON.stringify([lk, mk])}`;
      let texts = shared.get(due[0]);
      if (!texts) shared.set(due[0], texts = new Map());
      let text = texts.get(key);
      if (!text) {
        text = encode('current', currentPayload(due, view));
        texts.set(key, text);
      }
      return text;
    }
    return encode('current', currentPayload(due, view, this.deps.clock.now() / 1000));
  }
}
