// Spoolman's documented REST API and change feed (docs/reference/plugins.md §5.3), nothing else: the spools, one spool,
// `PUT /api/v1/spool/{id}/use` with `use_length`, `/api/v1/health`, and the websocket on `/api/v1/spool`. Spoolman
// itself cannot be installed on the build machines (§5.6); the tests use a stand-in that follows §5.3 exactly.
import type { WebSocket } from 'ws';

/** A spool as Spoolman returns it (null fields are left out, §5.3); only what Gantry reads is typed. */
export interface Spool {
  id: number;
  filament?: {
    id?: number; name?: string; material?: string; density?: number; diameter?: number; color_hex?: string;
    vendor?: { id?: number; name?: string };
    [key: string]: unknown;
  };
  remaining_weight?: number;
  remaining_length?: number;
  used_weight?: number;
  used_length?: number;
  initial_weight?: number;
  archived?: boolean;
  [key: string]: unknown;
}

export interface ChangeMessage {
  type: 'added' | 'updated' | 'deleted';
  resource: string;
  date?: string;
  payload: Record<string, unknown>;
}

/** A request Spoolman answered with an error status (its body's `message` when it gives one). */
export class SpoolmanHttpError extends Error {
  constructor(readonly status: number, message: string, readonly body: unknown) {
    super(message);
    this.name = 'SpoolmanHttpError';
  }
}

export interface RawReply { status: number; headers: Record<string, string>; body: unknown }

export class SpoolmanClient {
  constructor(private readonly base: string, private readonly timeoutMs: () => number) {}

  /** `http://host:7912/` → `http://host:7912/api` (the REST base; paths start with /v1/). */
  private url(path: string): string {
    let base = this.base;
    while (base.endsWith('/')) base = base.slice(0, -1);
    return `${base}/api${path}`;
  }

  /** Any documented call (the Moonraker proxy passes its `/v1/…` path and query through). */
  async request(method: string, path: string, body?: unknown, query?: string): Promise<RawReply> {
    const q = query ? (query.startsWith('?') ? query : `?${query}`) : '';
    const res = await fetch(this.url(path) + q, {
      method,
      headers: body !== undefined ? { 'content-type': 'application/json', accept: 'application/json' } : { accept: 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(this.timeoutMs()),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try { parsed = text === '' ? null : JSON.parse(text); } catch { /* kept as text */ }
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => { headers[k] = v; });
    return { status: res.status, headers, body: parsed };
  }

  private async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.request(method, path, body);
    if (r.status < 200 || r.status >= 300) {
      const msg = r.body && typeof r.body === 'object' && typeof (r.body as { message?: unknown }).message === 'string'
        ? (r.body as { message: string }).message : `HTTP ${r.status}`;
      throw new SpoolmanHttpError(r.status, msg, r.body);
    }
    return r.body as T;
  }

  health(): Promise<{ status: string }> { return this.json('GET', '/v1/health'); }

  /** The spools (not archived), as a bare array (§5.3). */
  spools(): Promise<Spool[]> { return this.json('GET', '/v1/spool'); }

  spool(id: number): Promise<Spool> { return this.json('GET', `/v1/spool/${id}`); }

  /** Filament used, in mm; Spoolman converts it with the filament's density and diameter and returns the spool. */
  use(id: number, lengthMm: number): Promise<Spool> { return this.json('PUT', `/v1/spool/${id}/use`, { use_length: lengthMm }); }

  /**
   * Follows the change feed (`ws://…/api/v1/spool`), reconnecting every `retryMs` while it is down. `connected`
   * hears every change of the link; no Origin header is sent (a non-browser client, §5.3).
   */
  follow(onMessage: (m: ChangeMessage) => void, connected: (up: boolean) => void, retryMs = 2000): () => void {
    let stopped = false;
    let socket: WebSocket | null = null;
    let timer: NodeJS.Timeout | null = null;
    let up = false;
    const setUp = (v: boolean) => { if (v !== up) { up = v; connected(v); } };
    const again = () => {
      if (stopped || timer) return;
      timer = setTimeout(() => { timer = null; void open(); }, retryMs);
      timer.unref();
    };
    const open = async () => {
      // ws is CommonJS: the built server's bundle gives it as the default export only (test/e2e/runtime/built-downloads.test.ts).
      const Ws = (await import('ws')).default;
      if (stopped) return;
      const wsUrl = this.url('/v1/spool').replace(/^http/, 'ws');
      const s = new Ws(wsUrl, { handshakeTimeout: this.timeoutMs() });
      socket = s;
      s.on('open', () => setUp(true));
      s.on('message', (data) => {
        let m: unknown;
        try { m = JSON.parse(String(data)); } catch { return; }
        if (m && typeof m === 'object' && typeof (m as ChangeMessage).type === 'string' && (m as ChangeMessage).payload && typeof (m as ChangeMessage).payload === 'object') onMessage(m as ChangeMessage);
      });
      s.on('error', () => { /* the close that follows retries */ });
      s.on('close', () => {
        if (socket === s) socket = null;
        setUp(false);
        again();
      });
    };
    void open().catch(() => again());
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      socket?.terminate();
      socket = null;
    };
  }
}
