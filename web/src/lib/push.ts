// Push channel client: the raw WebSocket at /sockjs/websocket (one JSON object per frame), authenticated with the
// login session, reconnecting with back-off. Messages are handed to one dispatcher.
import { at } from './base.ts';

export type PushMessage = Record<string, unknown>;

export interface PushOptions {
  /** Returns `name:session` for the `auth` message, or null when nobody is logged in. */
  credentials(): Promise<string | null>;
  onMessage(type: string, payload: unknown): void;
  /** `up` once the server greets the socket; otherwise how many attempts in a row have failed (0: just lost). */
  onStatus(up: boolean, failures: number): void;
}

export class PushClient {
  private ws: WebSocket | undefined;
  private retry = 0;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly opts: PushOptions) {}

  start(): void {
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.ws?.close();
  }

  send(msg: PushMessage): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  /** Logs the socket in again (after `reauthRequired` or a new login). */
  async reauth(): Promise<void> {
    const cred = await this.opts.credentials();
    if (cred) this.send({ auth: cred });
  }

  private open(): void {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${proto}//${location.host}${at('/sockjs/websocket')}`);
    this.ws = ws;
    ws.onmessage = (e) => {
      let msg: unknown;
      try {
        msg = JSON.parse(String(e.data));
      } catch {
        return;
      }
      if (!msg || typeof msg !== 'object') return;
      for (const [type, payload] of Object.entries(msg as PushMessage)) {
        if (type === 'connected') {
          this.retry = 0;
          this.opts.onStatus(true, 0);
          void this.reauth();
        }
        this.opts.onMessage(type, payload);
      }
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.opts.onStatus(false, this.retry);
      if (this.stopped) return;
      // Back off up to 5 s so a restarting server is not hammered but is picked up quickly.
      const delay = Math.min(5000, 500 * 2 ** this.retry++);
      this.timer = setTimeout(() => this.open(), delay);
    };
  }

  /** Tries again now (the browser came back online, the tab became visible, the user asked). */
  retryNow(): void {
    if (this.stopped || this.ws?.readyState === WebSocket.OPEN || this.ws?.readyState === WebSocket.CONNECTING) return;
    clearTimeout(this.timer);
    this.open();
  }
}
