// Helpers for the client-compatibility tests: a fast virtual printer, multipart uploads as the clients build them,
// JSON checks the clients rely on, and a raw push websocket like FDM Monster's and OctoPod's.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import WebSocket from 'ws';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { connectVirtual, FAST_PRINTER } from '../../helpers/connected-server.ts';

export { FAST_PRINTER };
export { waitFor } from '../../helpers/wait.ts';

/**
 * Where server() starts: a fresh base dir (default), or one another test prepared — test/import runs every client
 * sequence of this folder against a server imported from OctoPrint, with the imported keys and settings.
 */
export interface CompatTarget {
  /** A base dir to start on (a new one per call); absent: a fresh one. */
  baseDir?(t: TestContext): Promise<string>;
  /** Settings the sequences rely on that a fresh install has and the imported one may not (e.g. CORS off). */
  settings?: Record<string, unknown>;
  /**
   * The server the sequence talks to, made from the one started (test/farm: a farm printer's own port or its
   * /printer/NAME/ prefix), given the sequence's own settings.
   */
  view?(s: TestServer, settings: Record<string, unknown>): Promise<TestServer>;
}

let target: CompatTarget | undefined;

/** Makes server() start on prepared base dirs (call before the compat test files are imported). */
export function useCompatTarget(t: CompatTarget): void {
  target = t;
}

/** True when the sequences run on an imported server rather than a fresh install. */
export function onImportedServer(): boolean {
  return target !== undefined;
}

export async function server(t: TestContext, settings: Record<string, unknown> = {}): Promise<TestServer> {
  if (target) {
    const s = await startTestServer(t, { ...(target.baseDir ? { baseDir: await target.baseDir(t) } : {}), settings: { ...FAST_PRINTER, ...target.settings, ...settings } });
    return target.view ? target.view(s, settings) : s;
  }
  return startTestServer(t, { settings: { ...FAST_PRINTER, ...settings } });
}

/** POST /api/connection connect to the virtual printer (as Cura/HA/FDM do) and wait until it is Operational. */
export async function connectPrinter(s: TestServer, key?: string): Promise<void> {
  await connectVirtual(s, { key });
}

/** A small print: heats nothing, moves a little, so a job runs for a moment on the fast virtual printer. */
export function smallGcode(lines = 200): string {
  const out = ['; generated for compat tests', 'G21', 'G90', 'M82', 'G28'];
  for (let i = 0; i < lines; i++) out.push(`G1 X${(i % 50) + 10} Y${(i % 30) + 10} Z${(0.2 + Math.floor(i / 50) * 0.2).toFixed(2)} E${(i * 0.05).toFixed(2)} F1800`);
  out.push('M84');
  return out.join('\n') + '\n';
}

/** A multipart form in the exact part order a client sends (fields before `file` unless listed after). */
export function form(parts: [string, string][], file?: { name: string; content: string }, after: [string, string][] = []): FormData {
  const f = new FormData();
  for (const [k, v] of parts) f.append(k, v);
  if (file) f.append('file', new Blob([file.content], { type: 'application/octet-stream' }), file.name);
  for (const [k, v] of after) f.append(k, v);
  return f;
}

/** aiohttp's `response.json()` (Home Assistant) refuses anything but application/json. */
export async function json<T = Record<string, unknown>>(res: Response): Promise<T> {
  const type = res.headers.get('content-type') ?? '';
  assert.match(type, /^application\/json\b/, `${res.url} answered ${res.status} with Content-Type ${type}`);
  return await res.json() as T;
}

export async function expectStatus(res: Response, status: number, what: string): Promise<void> {
  if (res.status !== status) assert.fail(`${what}: expected ${status}, got ${res.status} ${await res.text()}`);
}

export type PushMessage = Record<string, unknown>;

/** JSON read the way the clients read it: by arbitrary paths. */
export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A raw websocket at `<base>/sockjs/websocket`, the way FDM Monster and OctoPod open it; records every message. */
export class RawPush {
  readonly messages: PushMessage[] = [];
  private waiters = new Set<() => void>();
  private constructor(readonly ws: WebSocket) {
    // Listen before the upgrade completes: `connected` may arrive in the same read as the handshake.
    ws.on('message', (d) => {
      this.messages.push(JSON.parse(d.toString()) as PushMessage);
      for (const w of [...this.waiters]) w();
    });
    ws.on('close', () => { for (const w of [...this.waiters]) w(); });
  }

  static async open(s: TestServer, base = ''): Promise<RawPush> {
    const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}${base}/sockjs/websocket`);
    const push = new RawPush(ws);
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    return push;
  }

  send(msg: unknown): void { this.ws.send(JSON.stringify(msg)); }

  /** The payload of the first message (from index `from`) whose first key is `type` and that matches `pred`. */
  next<T = Record<string, unknown>>(type: string, pred: (p: T) => boolean = () => true, from = 0, timeoutMs = 10_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        for (let i = from; i < this.messages.length; i++) {
          const m = this.messages[i];
          if (Object.keys(m)[0] === type && pred(m[type] as T)) { resolve(m[type] as T); return true; }
        }
        return false;
      };
      if (check()) return;
      const timer = setTimeout(() => {
        this.waiters.delete(w);
        reject(new Error(`no ${type} within ${timeoutMs} ms; got ${this.messages.map((m) => Object.keys(m)[0]).join(',')}`));
      }, timeoutMs);
      const w = (): void => {
        if (check() || this.ws.readyState === WebSocket.CLOSED) {
          clearTimeout(timer);
          this.waiters.delete(w);
          if (this.ws.readyState === WebSocket.CLOSED) reject(new Error(`socket closed before ${type}`));
        }
      };
      this.waiters.add(w);
    });
  }

  types(): string[] { return this.messages.map((m) => Object.keys(m)[0]); }

  close(): void { this.ws.close(); }
}
