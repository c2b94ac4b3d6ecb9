// Test helpers for the push channel: a raw websocket client and a SockJS client that record every message, and a
// passive login with an API key (what farm managers and phone apps do before `auth`).
import WebSocket from 'ws';
import SockJS from 'sockjs-client';
import type { TestServer } from '../helpers/server.ts';

export type PushMessage = Record<string, unknown>;

export interface PushTestClient {
  messages: PushMessage[];
  send(msg: unknown): void;
  sendRaw(text: string): void;
  /** Resolves with the first message (from index `from` on) of this type matching `pred`. */
  next(type: string, pred?: (payload: never) => boolean, opts?: { from?: number; timeoutMs?: number }): Promise<unknown>;
  ofType(type: string): unknown[];
  close(): void;
  closed: Promise<void>;
}

function recorder(sendText: (t: string) => void, close: () => void): PushTestClient & { push(m: PushMessage): void; ended(): void } {
  const messages: PushMessage[] = [];
  const waiters = new Set<() => void>();
  let ended!: () => void;
  const closed = new Promise<void>((r) => { ended = r; });
  let isClosed = false;
  const c = {
    messages,
    closed,
    push(m: PushMessage) {
      messages.push(m);
      for (const w of [...waiters]) w();
    },
    ended() {
      isClosed = true;
      ended();
      for (const w of [...waiters]) w();
    },
    send: (msg: unknown) => sendText(JSON.stringify(msg)),
    sendRaw: sendText,
    ofType: (type: string) => messages.filter((m) => type in m).map((m) => m[type]),
    close,
    next(type: string, pred?: (payload: never) => boolean, opts: { from?: number; timeoutMs?: number } = {}) {
      const from = opts.from ?? 0;
      return new Promise<unknown>((resolve, reject) => {
        const check = (): boolean => {
          for (let i = from; i < messages.length; i++) {
            const m = messages[i];
            if (type in m && (!pred || pred(m[type] as never))) {
              resolve(m[type]);
              return true;
            }
          }
          return false;
        };
        if (check()) return;
        // Closed already (before this wait began): nothing more can arrive.
        if (isClosed) {
          reject(new Error(`socket closed before a ${type} message`));
          return;
        }
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`no ${type} message within ${opts.timeoutMs ?? 10_000} ms (got ${messages.map((m) => Object.keys(m)[0]).join(',')})`));
        }, opts.timeoutMs ?? 10_000);
        const w = (): void => {
          if (check()) {
            clearTimeout(timer);
            waiters.delete(w);
          } else if (isClosed) {
            clearTimeout(timer);
            waiters.delete(w);
            reject(new Error(`socket closed before a ${type} message`));
          }
        };
        waiters.add(w);
      });
    },
  };
  return c;
}

export interface RawClient extends PushTestClient {
  ws: WebSocket;
}

export async function rawClient(server: { url: string }, opts: { headers?: Record<string, string> } = {}): Promise<RawClient> {
  const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/sockjs/websocket`, { headers: opts.headers });
  const rec = recorder((t) => ws.send(t), () => ws.close());
  ws.on('message', (data) => rec.push(JSON.parse(data.toString()) as PushMessage));
  ws.on('close', () => rec.ended());
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return Object.assign(rec, { ws });
}

/** `transports` limits the SockJS client to those (e.g. `['xhr-polling']`); by default it picks the websocket. */
export async function sockjsClient(server: { url: string }, opts: { transports?: string[] } = {}): Promise<PushTestClient & { sock: WebSocket; transport: () => string }> {
  const sock = new SockJS(`${server.url}/sockjs`, undefined, opts.transports ? { transports: opts.transports } : {});
  const rec = recorder((t) => sock.send(t), () => sock.close());
  sock.onmessage = (e: { data: unknown }) => {
    // OctoPrint's framing puts objects (not strings) in SockJS frames; the client hands them over parsed.
    rec.push((typeof e.data === 'string' ? JSON.parse(e.data) : e.data) as PushMessage);
  };
  sock.onclose = () => rec.ended();
  await new Promise<void>((resolve, reject) => {
    sock.onopen = () => resolve();
    sock.onerror = reject;
  });
  return Object.assign(rec, { sock: sock as unknown as WebSocket, transport: () => (sock as unknown as { transport: string }).transport });
}

/** Creates a user with a personal API key and logs in passively with it; returns the `auth` value. */
export async function userWithKey(server: TestServer, name: string, opts: { groups?: string[]; permissions?: string[] } = {}): Promise<{ key: string; auth: string }> {
  await server.access.users.addUser({ name, password: `${name}-pw-123`, groups: opts.groups ?? ['users'], permissions: opts.permissions });
  const key = await server.access.users.generateUserKey(name);
  return { key, auth: await passiveLogin(server, key) };
}

/** `POST /api/login {"passive": true}` with an API key, as FDM Monster and OctoPod do. */
export async function passiveLogin(server: TestServer, key: string): Promise<string> {
  const res = await server.api('/api/login', { method: 'POST', json: { passive: true }, key });
  if (res.status !== 200) throw new Error(`passive login failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { name: string; session: string };
  if (!body.session) throw new Error('passive login returned no session');
  return `${body.name}:${body.session}`;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
