// Test helper: a stand-in for Spoolman's server (its REST API under /api/v1 and its websocket change feed), following
// exactly the shapes in docs/reference/plugins.md §5.3. Spoolman itself cannot be installed on these machines (§5.6),
// so this is the true boundary the Spoolman client is tested against. It keeps every `use` call it was sent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface StandinSpool {
  id: number;
  registered: string;
  first_used?: string;
  last_used?: string;
  filament: { id: number; registered: string; name: string; vendor?: { id: number; registered: string; name: string; extra: Record<string, string> };
    material: string; density: number; diameter: number; weight: number; spool_weight: number; color_hex: string; extra: Record<string, string> };
  price?: number;
  remaining_weight: number;
  initial_weight: number;
  spool_weight: number;
  used_weight: number;
  remaining_length: number;
  used_length: number;
  location?: string;
  archived: boolean;
  extra: Record<string, string>;
}

export interface SpoolmanStandin {
  url: string;
  port: number;
  spools: Map<number, StandinSpool>;
  /** Every accepted `PUT /api/v1/spool/{id}/use` body, in order. */
  uses: Array<{ id: number; body: Record<string, unknown> }>;
  /** Sum of `use_length` accepted per spool. */
  usedLength(id: number): number;
  /** Closes the server and every feed socket (an outage); `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Sends a change message to every feed socket (as Spoolman does after a change from elsewhere). */
  publish(type: 'added' | 'updated' | 'deleted', spool: StandinSpool): void;
  add(weightLeft: number, opts?: { diameter?: number; density?: number }): StandinSpool;
  feedSockets(): number;
}

const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const mmPerGram = (s: StandinSpool): number => 1000 / (s.filament.density * Math.PI * (s.filament.diameter / 2) ** 2);

export async function startSpoolmanStandin(port = 0): Promise<SpoolmanStandin> {
  const spools = new Map<number, StandinSpool>();
  const uses: SpoolmanStandin['uses'] = [];
  let nextId = 1;
  let server: Server | null = null;
  let wss: WebSocketServer | null = null;
  const sockets = new Set<WebSocket>();

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const publish: SpoolmanStandin['publish'] = (type, spool) => {
    const msg = JSON.stringify({ type, resource: 'spool', date: now(), payload: spool });
    for (const s of sockets) s.send(msg);
  };
  const readBody = (req: IncomingMessage): Promise<string> => new Promise((resolve) => {
    let b = '';
    req.on('data', (d: Buffer) => { b += d.toString(); });
    req.on('end', () => resolve(b));
  });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    if (req.method === 'GET' && path === '/api/v1/health') return send(res, 200, { status: 'healthy' });
    if (req.method === 'GET' && path === '/api/v1/spool') {
      const list = [...spools.values()].filter((s) => url.searchParams.get('allow_archived') === 'true' || !s.archived);
      return send(res, 200, list, { 'x-total-count': String(list.length) });
    }
    const one = /^\/api\/v1\/spool\/(\d+)$/.exec(path);
    if (one && req.method === 'GET') {
      const s = spools.get(Number(one[1]));
      return s ? send(res, 200, s) : send(res, 404, { message: `No spool with ID ${one[1]} found.` });
    }
    const use = /^\/api\/v1\/spool\/(\d+)\/use$/.exec(path);
    if (use && req.method === 'PUT') {
      let body: Record<string, unknown>;
      try { body = JSON.parse(await readBody(req)) as Record<string, unknown>; } catch { return send(res, 422, { message: 'Invalid JSON' }); }
      const s = spools.get(Number(use[1]));
      if (!s) return send(res, 404, { message: `No spool with ID ${use[1]} found.` });
      const hasW = body.use_weight !== undefined && body.use_weight !== null, hasL = body.use_length !== undefined && body.use_length !== null;
      if (hasW && hasL) return send(res, 400, { message: 'Only specify either use_weight or use_length.' });
      if (!hasW && !hasL) return send(res, 400, { message: 'Either use_weight or use_length must be specified.' });
      const grams = hasW ? Number(body.use_weight) : Number(body.use_length) / mmPerGram(s);
      if (!Number.isFinite(grams)) return send(res, 422, { message: 'Not a number' });
      s.used_weight = Math.max(0, s.used_weight + grams);
      s.remaining_weight = Math.max(0, s.initial_weight - s.used_weight);
      s.used_length = s.used_weight * mmPerGram(s);
      s.remaining_length = s.remaining_weight * mmPerGram(s);
      s.first_used ??= now();
      s.last_used = now();
      uses.push({ id: s.id, body });
      publish('updated', s);
      return send(res, 200, s);
    }
    return send(res, 404, { detail: 'Not Found' });
  };

  let boundPort = port;
  const start = async () => {
    server = createServer((req, res) => { void handle(req, res); });
    wss = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      const p = new URL(req.url ?? '/', 'http://x').pathname;
      if (!/^\/api\/v1\/(spool(\/\d+)?)?$/.test(p)) { socket.destroy(); return; }
      wss!.handleUpgrade(req, socket, head, (ws) => {
        sockets.add(ws);
        ws.on('message', () => ws.send(JSON.stringify({ status: 'healthy' })));
        ws.on('close', () => sockets.delete(ws));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(boundPort, '127.0.0.1', () => resolve());
    });
    boundPort = (server.address() as AddressInfo).port;
  };
  const stop = async () => {
    for (const s of sockets) s.terminate();
    sockets.clear();
    wss?.close();
    const srv = server;
    server = null;
    if (srv) {
      srv.closeAllConnections();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    }
  };
  await start();

  const add: SpoolmanStandin['add'] = (weightLeft, opts = {}) => {
    const id = nextId++;
    const diameter = opts.diameter ?? 1.75, density = opts.density ?? 1.24;
    const s: StandinSpool = {
      id, registered: now(),
      filament: { id, registered: now(), name: `PLA ${id}`, vendor: { id: 1, registered: now(), name: 'Polymaker', extra: {} },
        material: 'PLA', density, diameter, weight: 1000, spool_weight: 140, color_hex: '000000', extra: {} },
      initial_weight: 1000, spool_weight: 140, used_weight: 1000 - weightLeft, remaining_weight: weightLeft,
      used_length: 0, remaining_length: 0, archived: false, extra: {},
    };
    s.used_length = s.used_weight * mmPerGram(s);
    s.remaining_length = s.remaining_weight * mmPerGram(s);
    spools.set(id, s);
    return s;
  };

  return {
    get url() { return `http://127.0.0.1:${boundPort}`; },
    get port() { return boundPort; },
    spools, uses,
    usedLength: (id) => uses.filter((u) => u.id === id).reduce((a, u) => a + Number(u.body.use_length ?? 0), 0),
    stop, start, publish, add,
    feedSockets: () => sockets.size,
  };
}
