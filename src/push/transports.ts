// Push transports: SockJS (`/sockjs/...`, all fallback transports) and the raw websocket (`/sockjs/websocket`) on the
// HTTP server, each connection wrapped as a transport-neutral PushConnection. Knows no message types.
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { createRequire } from 'node:module';
import type sockjs from 'sockjs';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../core/logger.ts';
import type { OutMessage } from './messages.ts';

export const PUSH_PREFIX = '/sockjs';
const RAW_WS_PATH = `${PUSH_PREFIX}/websocket`;
/** Client messages are small JSON objects; anything bigger is a mistake or an attack. */
export const MAX_CLIENT_MESSAGE = 64 * 1024;

/** One open push channel, whatever carries it. */
export interface PushConnection {
  readonly remoteAddress: string;
  readonly transport: 'sockjs' | 'websocket';
  /** Queue one server message (JSON of a single-key object). Never blocks. */
  send(msg: OutMessage): void;
  /** Bytes accepted by send() that have not reached the kernel yet (the client's backlog in our memory). */
  bufferedBytes(): number;
  /** Hold writes in user space until uncork(): a burst of messages leaves in one write instead of one each. */
  cork(): void;
  uncork(): void;
  close(code?: number, reason?: string): void;
  /** Drop at once without a close handshake (the peer is not reading). */
  terminate(): void;
  /**
   * The server stops: nothing is kept for the client's return. A closed SockJS session otherwise waits 5 s for the
   * client to come back for its close frame, and only then reports its end.
   */
  forget(): void;
  onMessage(fn: (text: string) => void): void;
  onClose(fn: () => void): void;
}

export interface TransportOptions {
  logger: Logger;
  /** Browsers' Origin must match Host unless cross-origin is allowed (read per connection). */
  allowCrossOrigin: () => boolean;
  onConnection: (conn: PushConnection) => void;
  /** Upgrade paths another edge on this server answers (not refused here). */
  othersUpgrade?: (path: string) => boolean;
}

// --- sockjs internals -------------------------------------------------------------------------------------------------
// OctoPrint frames each message as an object inside the array frame (`a[{"current":...}]`) instead of a quoted string;
// the SockJS client then hands clients an already-parsed object and OctoPrint's web client depends on that. The
// sockjs package only exposes string quoting, so its bulk framing is replaced once for this process.
const require = createRequire(import.meta.url);
interface SockjsReceiverProto { doSendBulk(this: { doSendFrame(f: string): boolean }, messages: string[]): boolean }
interface SockjsSession {
  readyState: number;
  didTimeout(): void;
  send_buffer: string[];
  recv?: { connection?: Duplex & { writableLength?: number }; response?: ServerResponse | null } | null;
}
interface SockjsConn extends sockjs.Connection { _session?: SockjsSession }
interface SockjsListenerServer { listener(opts?: object): { getHandler(): (req: IncomingMessage, res: unknown, head?: Buffer) => boolean } }

// Characters some browsers mangle inside frames; inside JSON they can only occur in strings, so escaping is safe.
// eslint-disable-next-line no-control-regex
const FRAME_UNSAFE = /[\x00-\x1f\u200c-\u200f\u2028-\u202f\u2060-\u206f\ufff0-\uffff]/g;
const escapeFrame = (json: string): string => {
  FRAME_UNSAFE.lastIndex = 0;
  return FRAME_UNSAFE.test(json)
    ? json.replace(FRAME_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : json;
};
let framingPatched = false;
function patchSockjsFraming(): void {
  if (framingPatched) return;
  const transport = require('sockjs/lib/transport.js') as { GenericReceiver: { prototype: SockjsReceiverProto } };
  transport.GenericReceiver.prototype.doSendBulk = function (messages: string[]) {
    return this.doSendFrame(`a[${messages.map(escapeFrame).join(',')}]`);
  };
  framingPatched = true;
}

function sockjsBuffered(conn: SockjsConn): number {
  const s = conn._session;
  if (!s) return 0;
  let n = 0;
  for (const m of s.send_buffer) n += m.length;
  const recv = s.recv;
  if (recv) n += recv.connection?.writableLength ?? recv.response?.socket?.writableLength ?? 0;
  return n;
}

// The typings declare a string code, but the close frame must carry a number (`c[3000,"..."]`).
const closeSockjs = (conn: SockjsConn, code: number, reason: string): void => {
  (conn.close as unknown as (code: number, reason: string) => boolean).call(conn, code, reason);
};

/**
 * A closed SockJS session waits 5 s (disconnect_delay) for the client to fetch its close frame, on a timer that kept a
 * stopped server's process alive: dropped, it ends as soon as its request is gone, by sockjs' own timeout path.
 */
function endSockjsSession(conn: SockjsConn, triesLeft = 100): void {
  const session = conn._session;
  if (!session || session.readyState === 3 /* CLOSED */) return;
  if (session.recv) {
    if (triesLeft > 0) setImmediate(() => endSockjsSession(conn, triesLeft - 1));
    return;
  }
  session.didTimeout();
}

function wrapSockjs(conn: SockjsConn): PushConnection {
  return {
    remoteAddress: conn.remoteAddress ?? '',
    transport: 'sockjs',
    send: (msg) => { conn.write(msg.text); },
    bufferedBytes: () => sockjsBuffered(conn),
    cork: () => { conn._session?.recv?.connection?.cork(); },
    uncork: () => { conn._session?.recv?.connection?.uncork(); },
    close: (code = 1000, reason = 'Normal closure') => { closeSockjs(conn, code, reason); },
    terminate: () => {
      const recv = conn._session?.recv;
      closeSockjs(conn, 3000, 'Too far behind');
      recv?.connection?.destroy();
      recv?.response?.socket?.destroy();
    },
    forget: () => endSockjsSession(conn),
    onMessage: (fn) => { conn.on('data', (m: string) => fn(m)); },
    onClose: (fn) => { conn.on('close', fn); },
  };
}

function wrapWebSocket(ws: WebSocket, remoteAddress: string): PushConnection {
  return {
    remoteAddress,
    transport: 'websocket',
    // The shared buffer spares every client its own UTF-8 encoding of the same message.
    send: (msg) => { if (ws.readyState === ws.OPEN) ws.send(msg.buffer, { binary: false }); },
    bufferedBytes: () => ws.bufferedAmount,
    // ws has no public cork; its socket is a net.Socket whose writes are batched by cork/uncork.
    cork: () => { (ws as unknown as { _socket?: Duplex })._socket?.cork(); },
    uncork: () => { (ws as unknown as { _socket?: Duplex })._socket?.uncork(); },
    close: (code = 1000, reason = '') => { ws.close(code, reason); },
    terminate: () => { ws.terminate(); },
    forget: () => undefined,
    onMessage: (fn) => {
      ws.on('message', (data, isBinary) => { if (!isBinary) fn(data.toString()); });
    },
    onClose: (fn) => { ws.on('close', fn); },
  };
}

// --- attachment -----------------------------------------------------------------------------------------------------

const pathOf = (url: string | undefined): string => {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q === -1 ? u : u.slice(0, q);
};
const isPushPath = (path: string): boolean => path === PUSH_PREFIX || path.startsWith(`${PUSH_PREFIX}/`);

function originAllowed(req: IncomingMessage, allowCrossOrigin: boolean): boolean {
  const origin = req.headers.origin;
  if (!origin || allowCrossOrigin) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

function refuseUpgrade(socket: Duplex, status: string): void {
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

export interface AttachedTransports {
  /**
   * Detach from the server and close every open push connection: politely (what was sent still arrives) for up to
   * `graceMs`, then at once.
   */
  close(graceMs?: number): Promise<void>;
}

/**
 * Routes `/sockjs*` requests and upgrades to the push transports before the HTTP framework sees them (SockJS reads
 * request bodies itself), and refuses websocket upgrades on every other path.
 */
export function attachPushTransports(server: HttpServer, opts: TransportOptions): AttachedTransports {
  const { logger } = opts;
  const open = new Set<PushConnection>();
  const track = (c: PushConnection): void => {
    open.add(c);
    c.onClose(() => open.delete(c));
    opts.onConnection(c);
  };

  // sockjs loads with the first push request, not at start: its modules and the lookup tables it builds when loaded
  // cost ≈ 40–120 ms of start and ≈ 2 MB that a server nobody has opened the UI of does not need (bench/memory.ts).
  // A request waits a tick for it: its body and an upgraded socket stay paused until sockjs reads them.
  type Handler = (req: IncomingMessage, res: unknown, head?: Buffer) => boolean;
  let sockjsHandler: Handler | undefined;
  let sockjsLoading: Promise<Handler> | undefined;
  const loadSockjs = (): Promise<Handler> => (sockjsLoading ??= import('sockjs').then(({ default: lib }) => {
    patchSockjsFraming();
    const sjs = lib.createServer({
      prefix: PUSH_PREFIX,
      heartbeat_delay: 25_000,
      disconnect_delay: 5_000,
      response_limit: 128 * 1024,
      jsessionid: false,
      log: (severity, line) => { if (severity === 'error') logger.warn({ line }, 'sockjs'); else logger.trace({ line }, 'sockjs'); },
    });
    sjs.on('connection', (conn: SockjsConn | null) => { if (conn) track(wrapSockjs(conn)); });
    return (sockjsHandler = (sjs as unknown as SockjsListenerServer).listener().getHandler());
  }));
  const withSockjs = (use: (handler: Handler) => void, failed: (err: unknown) => void): void => {
    if (!sockjsHandler) {
      loadSockjs().then(use).catch(failed);
      return;
    }
    try {
      use(sockjsHandler);
    } catch (err) {
      failed(err);
    }
  };

  // Oversized messages are ignored by the service (one bad message must not close the channel); far bigger frames
  // are cut off here so they cannot exhaust memory. Loaded with the first raw WebSocket, like sockjs (≈ 0.5 MB of
  // heap an idle server does not need); the upgraded socket waits paused meanwhile.
  let wssLoading: Promise<WebSocketServer> | undefined;
  const loadWss = (): Promise<WebSocketServer> => (wssLoading ??= import('ws').then(({ WebSocketServer: Server }) =>
    new Server({ noServer: true, maxPayload: 16 * MAX_CLIENT_MESSAGE, perMessageDeflate: false })));

  const previousRequest = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (isPushPath(pathOf(req.url))) {
      if (!originAllowed(req, opts.allowCrossOrigin())) {
        res.writeHead(403, { 'Content-Type': 'text/plain' }).end('Cross origin push connections are not allowed');
        return;
      }
      withSockjs((handler) => handler(req, res), (err) => {
        logger.error({ err }, 'sockjs failed to load');
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
        res.end();
      });
      return;
    }
    for (const l of previousRequest) l.call(server, req, res);
  };
  server.on('request', onRequest);

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', (err) => logger.debug({ err }, 'push upgrade socket error'));
    const path = pathOf(req.url);
    if (!isPushPath(path)) {
      if (opts.othersUpgrade?.(path)) return;
      return refuseUpgrade(socket, '404 Not Found');
    }
    if (!originAllowed(req, opts.allowCrossOrigin())) return refuseUpgrade(socket, '403 Forbidden');
    if (path === RAW_WS_PATH || path === `${RAW_WS_PATH}/`) {
      loadWss().then((wss) => wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('error', (err) => logger.debug({ err }, 'push websocket error'));
        track(wrapWebSocket(ws, req.socket.remoteAddress ?? ''));
      }), (err: unknown) => {
        logger.error({ err }, 'ws failed to load');
        refuseUpgrade(socket, '500 Internal Server Error');
      });
      return;
    }
    withSockjs((handler) => {
      if (!handler(req, socket, head)) refuseUpgrade(socket, '404 Not Found');
    }, (err) => {
      logger.debug({ err }, 'sockjs upgrade failed');
      refuseUpgrade(socket, '400 Bad Request');
    });
  };
  server.on('upgrade', onUpgrade);

  return {
    async close(graceMs = 0) {
      server.off('upgrade', onUpgrade);
      if (graceMs > 0 && open.size > 0) {
        const allClosed = new Promise<void>((resolve) => {
          let left = open.size;
          for (const c of [...open]) {
            c.onClose(() => { if (--left === 0) resolve(); });
            try { c.close(1001, 'Server shutting down'); } catch (err) { logger.debug({ err }, 'push connection did not close cleanly'); }
            c.forget();
          }
        });
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([allClosed, new Promise<void>((r) => { timer = setTimeout(r, graceMs); })]);
        clearTimeout(timer);
      }
      for (const c of [...open]) {
        try { c.terminate(); } catch (err) { logger.debug({ err }, 'push connection did not close cleanly'); }
        c.forget();
      }
      open.clear();
      if (wssLoading) (await wssLoading.catch(() => undefined))?.close();
    },
  };
}
