// A JSON webhook: an http(s):// target gets one POST per notification with the event, its payload, the printer, the
// message and the snapshot (inline as base64, or the camera's URL).
import { readFile } from 'node:fs/promises';
import type { Notification, SendOptions, Sender } from './notification.ts';

/** Reads at most this much of a snapshot into a message (a camera that sends more is not a snapshot). */
export const SNAPSHOT_MAX_BYTES = 8 * 1024 * 1024;

export class WebhookSender implements Sender {
  readonly kind = 'webhook';
  constructor(private readonly url: string) {}

  async send(n: Notification, opts: SendOptions): Promise<void> {
    let snapshot: Record<string, string> | null = null;
    if (n.snapshot) {
      snapshot = opts.snapshotAs === 'link'
        ? { url: n.snapshot.url, mimetype: n.snapshot.mimetype }
        : { mimetype: n.snapshot.mimetype, base64: (await readFile(n.snapshot.file)).subarray(0, SNAPSHOT_MAX_BYTES).toString('base64') };
    }
    const body = JSON.stringify({
      event: n.event, title: n.title, message: n.body, type: n.type, printer: n.printer, payload: n.payload,
      time: new Date(n.time).toISOString(), snapshot,
    });
    const res = await fetch(this.url, {
      method: 'POST', body, headers: { 'Content-Type': 'application/json', 'User-Agent': 'Gantry' },
      signal: AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]), redirect: 'error',
    });
    await res.arrayBuffer().catch(() => undefined);
    if (res.status < 200 || res.status > 299) throw new Error(`the webhook answered ${res.status}`);
  }
}
