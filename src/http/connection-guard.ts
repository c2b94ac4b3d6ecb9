// Slow-client defences on the HTTP server: header, body-progress and keep-alive timeouts and a per-address socket cap.
import type { Server, IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../core/logger.ts';

export interface ConnectionLimits {
  /** Seconds for the request line and headers. */
  headersTimeout: number;
  /** Window (seconds) over which a request body must average `bodyMinRate` bytes per second, and never stall. */
  bodyTimeout: number;
  bodyMinRate: number;
  keepAliveTimeout: number;
  /** Open sockets per remote address; 0 means no cap. */
  maxPerAddress: number;
  /** Addresses the cap does not apply to (this host: a reverse proxy there speaks for every client). */
  uncapped: readonly string[];
}

/**
 * Fastify's server options for these limits. Node itself closes connections whose headers are not complete in time
 * (408). There is no total request time limit: a large upload may take as long as it needs while it keeps moving.
 */
export function serverTimeouts(limits: ConnectionLimits): { keepAliveTimeout: number; requestTimeout: number; http: { headersTimeout: number; connectionsCheckingInterval: number } } {
  const headersTimeout = Math.max(1, Math.round(limits.headersTimeout * 1000));
  return {
    keepAliveTimeout: Math.max(1, Math.round(limits.keepAliveTimeout * 1000)),
    requestTimeout: 0,
    // Node checks header deadlines on this tick; a quarter of the timeout keeps the overshoot small.
    http: { headersTimeout, connectionsCheckingInterval: Math.max(50, Math.min(5_000, Math.round(headersTimeout / 4))) },
  };
}

interface BodyWatch { socket: Socket; req: IncomingMessage; since: number; bytesAtStart: number }

/**
 * Requests one connection may have unanswered at once (HTTP/1.1 pipelining). Node reads on while the handlers of the
 * requests it has parsed wait on I/O, so a client sending requests back to back without reading the answers had the
 * server working on all of them at once: 65,000 pipelined GET /api/settings on one socket grew the server from 60 to
 * over 340 MB, and on. Browsers and the API's clients send one at a time; a connection past this is closed.
 */
export const MAX_REQUESTS_IN_FLIGHT = 32;
const IN_FLIGHT = Symbol('gantry.requestsInFlight');
type CountedSocket = Socket & { [IN_FLIGHT]?: number };

/**
 * Guards a server against clients that hold sockets without making progress:
 * - sockets beyond `maxPerAddress` from one address (except the `uncapped` ones) are closed as they connect;
 * - a connection with more than MAX_REQUESTS_IN_FLIGHT requests unanswered (pipelined) is closed;
 * - a request whose body does not average `bodyMinRate` B/s over each `bodyTimeout` window (a trickle or a stall) is
 *   closed. Only while the body is still arriving: a client waiting for its answer, a push stream or an upgraded
 *   websocket is never timed out here, and a body the server itself has paused (back-pressure) does not count.
 * The cap and rates are read on every use, so they follow config changes. Returns a function that removes the guard.
 */
export function guardConnections(server: Server, limits: () => ConnectionLimits, logger: Logger): () => void {
  const perAddress = new Map<string, number>();
  const onConnection = (socket: Socket): void => {
    const address = socket.remoteAddress ?? '';
    const open = (perAddress.get(address) ?? 0) + 1;
    const { maxPerAddress: cap, uncapped } = limits();
    if (cap > 0 && open > cap && !uncapped.includes(address)) {
      logger.warn({ address, cap }, 'connection refused: too many open connections from this address');
      socket.destroy();
      return;
    }
    perAddress.set(address, open);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  };

  const watches = new Set<BodyWatch>();
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const socket: CountedSocket = req.socket;
    const inFlight = (socket[IN_FLIGHT] ?? 0) + 1;
    socket[IN_FLIGHT] = inFlight;
    res.once('close', () => { socket[IN_FLIGHT] = (socket[IN_FLIGHT] ?? 1) - 1; });
    if (inFlight > MAX_REQUESTS_IN_FLIGHT) {
      if (!socket.destroyed) logger.warn({ address: socket.remoteAddress, max: MAX_REQUESTS_IN_FLIGHT }, 'connection closed: too many pipelined requests');
      socket.destroy();
      return;
    }
    // Without a body there is nothing to trickle (most requests): no watch, no listeners.
    if (req.complete || (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)) return;
    const w: BodyWatch = { socket: req.socket, req, since: performance.now(), bytesAtStart: req.socket.bytesRead };
    watches.add(w);
    watchWhileBodies();
    const done = () => watches.delete(w);
    req.once('end', done);
    req.once('close', done);
    res.once('finish', done);
    res.once('close', done);
  };

  const check = (): void => {
    const { bodyTimeout, bodyMinRate } = limits();
    const windowMs = bodyTimeout * 1000;
    // The monotonic clock: a jump of the wall clock (NTP after boot) must neither cut a body nor let a stalled one stay.
    const now = performance.now();
    for (const w of watches) {
      if (w.req.complete || w.socket.destroyed) { watches.delete(w); continue; }
      // The server is not reading (a slow disk behind an upload): the client is not to blame, start a new window.
      if (w.socket.isPaused()) { w.since = now; w.bytesAtStart = w.socket.bytesRead; continue; }
      if (now - w.since < windowMs) continue;
      const moved = w.socket.bytesRead - w.bytesAtStart;
      if (moved === 0 || moved < bodyMinRate * bodyTimeout) {
        logger.warn({ address: w.socket.remoteAddress, bytes: moved, seconds: bodyTimeout }, 'connection closed: request body too slow');
        watches.delete(w);
        w.socket.destroy();
        continue;
      }
      w.since = now;
      w.bytesAtStart = w.socket.bytesRead;
    }
    if (watches.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  // Checked on a tick a quarter of the window, so a stall is caught within 1.25 windows; only while bodies are coming
  // in: an idle server does not wake up for it.
  let timer: NodeJS.Timeout | undefined;
  const watchWhileBodies = (): void => {
    if (timer !== undefined) return;
    timer = setInterval(check, Math.max(50, Math.min(5_000, limits().bodyTimeout * 250)));
    timer.unref();
  };

  server.on('connection', onConnection);
  server.on('request', onRequest);
  const remove = (): void => {
    clearInterval(timer);
    timer = undefined;
    server.off('connection', onConnection);
    server.off('request', onRequest);
    watches.clear();
  };
  server.once('close', remove);
  return remove;
}
