// ntfy without Apprise: ntfy://[user[:password]@]host[:port]/topic (http) or ntfys://… (https), with `?priority=` and
// `?tags=` passed on. A text message is a POST to the topic; with a snapshot, the picture is PUT as the attachment and
// the text goes in the Message header (ntfy's publishing API).
import { readFile } from 'node:fs/promises';
import type { Notification, SendOptions, Sender } from './notification.ts';
import { SNAPSHOT_MAX_BYTES } from './webhook-sender.ts';

export interface NtfyTarget { endpoint: string; headers: Record<string, string> }

/** The topic's HTTP endpoint and headers of an ntfy URL; throws with a readable reason when it is not one. */
export function parseNtfyUrl(url: string): NtfyTarget {
  const m = /^(ntfys?):\/\/(.+)$/i.exec(url);
  if (!m) throw new Error('not an ntfy:// or ntfys:// URL');
  const secure = m[1].toLowerCase() === 'ntfys';
  let u: URL;
  try {
    u = new URL(`${secure ? 'https' : 'http'}://${m[2]}`);
  } catch {
    throw new Error('the ntfy URL is not valid');
  }
  const topic = u.pathname.split('/').filter(Boolean).join('/');
  // ntfy://topic alone is a topic on ntfy.sh (Apprise's cloud mode).
  const cloud = topic === '';
  const host = cloud ? 'ntfy.sh' : u.host;
  const name = cloud ? u.hostname : topic;
  if (!/^[\w-]{1,64}$/.test(name)) throw new Error('an ntfy topic is 1–64 letters, digits, - or _');
  const headers: Record<string, string> = {};
  if (u.username) headers.Authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  const token = u.searchParams.get('token');
  if (token) headers.Authorization = `Bearer ${token}`;
  for (const key of ['priority', 'tags', 'click']) {
    const v = u.searchParams.get(key);
    if (v) headers[key[0].toUpperCase() + key.slice(1)] = v;
  }
  return { endpoint: `${cloud || secure ? 'https' : 'http'}://${host}/${name}`, headers };
}

/** ntfy's headers are ASCII: other characters are RFC 2047-encoded, which ntfy decodes. */
const headerText = (s: string): string => (/^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${Buffer.from(s).toString('base64')}?=`);

export class NtfySender implements Sender {
  readonly kind = 'ntfy';
  private readonly target: NtfyTarget;
  constructor(url: string) {
    this.target = parseNtfyUrl(url);
  }

  async send(n: Notification, opts: SendOptions): Promise<void> {
    const headers: Record<string, string> = { ...this.target.headers, Title: headerText(n.title), 'User-Agent': 'Gantry' };
    let body: string | Buffer = n.body;
    let method = 'POST';
    if (n.snapshot) {
      method = 'PUT';
      body = (await readFile(n.snapshot.file)).subarray(0, SNAPSHOT_MAX_BYTES);
      headers.Filename = 'snapshot.jpg';
      headers.Message = headerText(n.body);
    }
    const res = await fetch(this.target.endpoint, {
      method, body, headers, signal: AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]), redirect: 'error',
    });
    await res.arrayBuffer().catch(() => undefined);
    if (res.status < 200 || res.status > 299) throw new Error(`ntfy answered ${res.status}`);
  }
}
