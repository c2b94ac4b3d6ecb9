// Test helper: one HTTP request with exact control over headers and body framing (fetch adds and normalises headers).
import { request as httpRequest } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RawOptions {
  method?: string;
  headers?: Record<string, string>;
  /** Written as is; with `chunked` it is sent with Transfer-Encoding: chunked instead of a Content-Length. */
  body?: string | Buffer;
  chunked?: boolean;
}

export function raw(url: string, opts: RawOptions = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
    const headers: Record<string, string> = { ...opts.headers };
    if (body && !opts.chunked) headers['Content-Length'] = String(body.length);
    if (opts.chunked) headers['Transfer-Encoding'] = 'chunked';
    const req = httpRequest(url, { method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body && body.length > 0) req.write(body);
    req.end();
  });
}
