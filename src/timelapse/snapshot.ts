// Fetching one camera snapshot into a file: an HTTP(S) GET with a timeout and optional TLS validation, streamed to disk.
import { request as httpRequest, STATUS_CODES, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';

export interface SnapshotOptions {
  url: string;
  /** Seconds for the whole request (connect, headers and body). */
  timeout: number;
  validateSsl: boolean;
}

/**
 * Writes the snapshot to `file`; rejects with a readable reason (and leaves no partial file) on any failure, or when
 * `cancel` fires (the server stopping: a camera that never answers must not hold it up).
 */
export async function fetchSnapshot(opts: SnapshotOptions, file: string, cancel?: AbortSignal): Promise<void> {
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch {
    throw new Error(`Invalid snapshot URL: ${opts.url}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`Unsupported snapshot URL scheme: ${url.protocol}`);
  const ms = Math.max(1, opts.timeout) * 1000;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`Timed out after ${opts.timeout}s fetching ${opts.url}`)), ms);
  const cancelled = () => controller.abort(cancel?.reason);
  if (cancel?.aborted) cancelled();
  cancel?.addEventListener('abort', cancelled, { once: true });
  try {
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const requester = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = requester(url, { method: 'GET', signal: controller.signal, rejectUnauthorized: opts.validateSsl }, resolve);
      req.on('error', reject);
      req.end();
    });
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      res.resume();
      const kind = status >= 500 ? 'Server Error' : 'Client Error';
      throw new Error(`${status} ${kind}: ${res.statusMessage ?? STATUS_CODES[status] ?? ''} for url: ${opts.url}`);
    }
    await pipeline(res, createWriteStream(file), { signal: controller.signal });
  } catch (err) {
    await unlink(file).catch(() => {});
    const reason = controller.signal.aborted ? controller.signal.reason : err;
    throw reason instanceof Error ? reason : new Error(String(reason));
  } finally {
    clearTimeout(timer);
    cancel?.removeEventListener('abort', cancelled);
  }
}
