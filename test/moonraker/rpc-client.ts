// Test helper: a Moonraker JSON-RPC client over a real websocket (as Fluidd, KlipperScreen and klipper-tui connect).
import WebSocket from 'ws';
import { waitFor } from '../helpers/wait.ts';

export interface Notification { method: string; params?: unknown[] }

export class RpcClient {
  private nextId = 10_000;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error & { code?: number }) => void }>();
  readonly notifications: Notification[] = [];
  readonly raw: unknown[] = [];
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as Record<string, unknown> | unknown[];
      this.raw.push(msg);
      if (Array.isArray(msg)) return;
      if (typeof msg.id === 'number' && this.pending.has(msg.id)) {
        const p = this.pending.get(msg.id)!;
        this.pending.delete(msg.id);
        if (msg.error) {
          const e = msg.error as { code: number; message: string };
          p.reject(Object.assign(new Error(e.message), { code: e.code }));
        } else p.resolve(msg.result);
      } else if (typeof msg.method === 'string' && msg.id === undefined) {
        this.notifications.push({ method: msg.method, params: msg.params as unknown[] | undefined });
      }
    });
    ws.on('close', () => { this.closed = true; });
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<RpcClient> {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    return new RpcClient(ws);
  }

  call<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', method, ...(params ? { params } : {}), id }));
    });
  }

  /** Sends raw text and waits for the next frame that is not a notification. */
  async sendRaw(text: string): Promise<unknown> {
    const before = this.raw.length;
    this.ws.send(text);
    let found: unknown;
    await waitFor('a reply', () => {
      for (const m of this.raw.slice(before)) {
        if (Array.isArray(m) || (typeof m === 'object' && m !== null && !('method' in m && !('id' in m)))) { found = m; return true; }
      }
      return false;
    });
    return found;
  }

  /** Waits for a notification matching `pred` among those received since index `from`. */
  async next(method: string, pred: (n: Notification) => boolean = () => true, from = 0, what = method): Promise<Notification> {
    let hit: Notification | undefined;
    await waitFor(what, () => (hit = this.notifications.slice(from).find((n) => n.method === method && pred(n))) !== undefined, { timeoutMs: 20_000 });
    return hit!;
  }

  close(): void { this.ws.close(); }
}

/** Merges every notify_status_update (one level deep, as the UIs do) into `into`. */
export function mergeStatus(into: Record<string, Record<string, unknown>>, notifications: Notification[]): Record<string, Record<string, unknown>> {
  for (const n of notifications) {
    if (n.method !== 'notify_status_update') continue;
    const status = n.params![0] as Record<string, Record<string, unknown>>;
    for (const [k, v] of Object.entries(status)) into[k] = { ...into[k], ...v };
  }
  return into;
}
