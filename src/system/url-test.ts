// The URL utility test: one HTTP(S) request with optional basic/digest/bearer auth, judged by status and content type.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createHash, randomBytes } from 'node:crypto';
import { invalid } from '../core/errors.ts';
import { shown } from '../core/text.ts';

/** Named status ranges of docs/reference/interface-spec.md, Utility tests (inclusive bounds). */
export const STATUS_RANGES: Record<string, [number, number]> = {
  informational: [100, 199], success: [200, 299], redirection: [300, 399], client_error: [400, 499], server_error: [500, 599],
  normal: [100, 399], error: [400, 599], any: [100, Number.MAX_SAFE_INTEGER],
};

export type StatusRule = [number, number];

/** A single code, a range name, or a list of both → inclusive intervals. Unknown names are a bad request. */
export function parseStatusSpec(spec: unknown): StatusRule[] {
  if (spec === undefined || spec === null) return [STATUS_RANGES.normal];
  const items = Array.isArray(spec) ? spec : [spec];
  if (items.length === 0) return [STATUS_RANGES.normal];
  return items.map((item) => {
    if (typeof item === 'number' && Number.isInteger(item)) return [item, item] as StatusRule;
    if (typeof item === 'string' && /^\d{3}$/.test(item)) return [Number(item), Number(item)] as StatusRule;
    if (typeof item === 'string' && item in STATUS_RANGES) return STATUS_RANGES[item];
    throw invalid(`Invalid status: ${shown(item)}`);
  });
}

/** `type/*` and `*\/*` wildcards; everything else must match exactly (case-insensitive, parameters ignored). */
export function contentTypeMatches(contentType: string, pattern: string): boolean {
  const ct = contentType.toLowerCase();
  const p = pattern.toLowerCase().trim();
  if (p === '*/*' || p === '*') return true;
  if (p.endsWith('/*')) return ct.startsWith(p.slice(0, -1));
  return ct === p;
}

export interface UrlTestParams {
  url: string;
  method: string;
  timeoutMs: number;
  validSsl: boolean;
  basicAuth?: { username: string; password: string };
  digestAuth?: { username: string; password: string };
  bearerAuth?: string;
  status: StatusRule[];
  response?: 'bytes' | 'json';
  contentTypeWhitelist?: string[];
  contentTypeBlacklist?: string[];
}

export interface UrlTestResult {
  url: string;
  status: number;
  result: boolean;
  response?: { headers: Record<string, string>; content: unknown };
}

interface Reply { status: number; headers: IncomingHttpHeaders; body: Buffer }

const MAX_BODY = 16 * 1024 * 1024;

function send(url: URL, method: string, headers: Record<string, string>, p: UrlTestParams, deadline: number, readBody: boolean): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const requester = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = requester(url, { method, headers, rejectUnauthorized: p.validSsl }, (res) => {
      const done = (body: Buffer) => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        res.destroy();
      };
      // Without a body to report, the headers are the answer; an endless stream (MJPEG webcam) must not hold the test.
      if (!readBody) return done(Buffer.alloc(0));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (size >= MAX_BODY) done(Buffer.concat(chunks).subarray(0, MAX_BODY));
      });
      res.on('end', () => done(Buffer.concat(chunks)));
      res.on('error', (e) => { clearTimeout(timer); reject(e); });
    });
    const timer = setTimeout(() => req.destroy(new Error('timeout')), Math.max(0, deadline - performance.now()));
    req.on('error', (e) => { clearTimeout(timer); reject(e); });
    req.end();
  });
}

function digestHeader(challenge: string, method: string, url: URL, auth: { username: string; password: string }): string | undefined {
  if (!/^digest\s/i.test(challenge)) return undefined;
  const params: Record<string, string> = {};
  for (const m of challenge.slice(7).matchAll(/(?<!\w)(\w+)=(?:"([^"]*)"|([^,\s]*))/g)) params[m[1].toLowerCase()] = m[2] ?? m[3];
  const algorithm = (params.algorithm ?? 'MD5').toUpperCase();
  const hashName = algorithm.startsWith('SHA-256') ? 'sha256' : algorithm.startsWith('MD5') ? 'md5' : undefined;
  if (!hashName || !params.nonce) return undefined;
  const H = (s: string) => createHash(hashName).update(s).digest('hex');
  const uri = url.pathname + url.search;
  const cnonce = randomBytes(8).toString('hex');
  const nc = '00000001';
  let ha1 = H(`${auth.username}:${params.realm ?? ''}:${auth.password}`);
  if (algorithm.endsWith('-SESS')) ha1 = H(`${ha1}:${params.nonce}:${cnonce}`);
  const ha2 = H(`${method}:${uri}`);
  const qop = params.qop?.split(',').map((q) => q.trim()).includes('auth') ? 'auth' : undefined;
  const response = qop ? H(`${ha1}:${params.nonce}:${nc}:${cnonce}:${qop}:${ha2}`) : H(`${ha1}:${params.nonce}:${ha2}`);
  const parts = [`username="${auth.username}"`, `realm="${params.realm ?? ''}"`, `nonce="${params.nonce}"`, `uri="${uri}"`,
    `algorithm=${params.algorithm ?? 'MD5'}`, `response="${response}"`];
  if (params.opaque !== undefined) parts.push(`opaque="${params.opaque}"`);
  if (qop) parts.push(`qop=${qop}`, `nc=${nc}`, `cnonce="${cnonce}"`);
  return `Digest ${parts.join(', ')}`;
}

function flatHeaders(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

export async function urlTest(p: UrlTestParams): Promise<UrlTestResult> {
  let url: URL;
  try {
    url = new URL(p.url);
  } catch {
    throw invalid(`Invalid url: ${p.url}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`Invalid url, only http and https are supported: ${p.url}`);
  const method = p.method.toUpperCase();
  const headers: Record<string, string> = { 'User-Agent': 'Gantry URL test' };
  if (p.basicAuth) headers.Authorization = `Basic ${Buffer.from(`${p.basicAuth.username}:${p.basicAuth.password}`).toString('base64')}`;
  if (p.bearerAuth) headers.Authorization = `Bearer ${p.bearerAuth}`;
  const readBody = p.response !== undefined && method !== 'HEAD';
  const deadline = performance.now() + p.timeoutMs; // monotonic: a jump of the wall clock must not stretch or cut it

  let reply: Reply;
  try {
    reply = await send(url, method, headers, p, deadline, readBody);
    const challenge = reply.headers['www-authenticate'];
    if (reply.status === 401 && p.digestAuth && typeof challenge === 'string') {
      const auth = digestHeader(challenge, method, url, p.digestAuth);
      if (auth) reply = await send(url, method, { ...headers, Authorization: auth }, p, deadline, readBody);
    }
  } catch {
    // Timeouts and unreachable hosts both report status 0 and a failed check.
    return { url: p.url, status: 0, result: false };
  }

  let result = p.status.some(([lo, hi]) => reply.status >= lo && reply.status <= hi);
  const contentType = (reply.headers['content-type'] ?? '').split(';')[0].trim();
  if (p.contentTypeWhitelist?.length && !(contentType && p.contentTypeWhitelist.some((w) => contentTypeMatches(contentType, w)))) result = false;
  if (p.contentTypeBlacklist?.length && contentType && p.contentTypeBlacklist.some((b) => contentTypeMatches(contentType, b))) result = false;

  const out: UrlTestResult = { url: p.url, status: reply.status, result };
  if (p.response !== undefined) {
    let content: unknown = reply.body.toString('base64');
    if (p.response === 'json') {
      try {
        content = JSON.parse(reply.body.toString('utf8'));
      } catch {
        content = null;
        out.result = false;
      }
    }
    out.response = { headers: flatHeaders(reply.headers), content };
  }
  return out;
}
