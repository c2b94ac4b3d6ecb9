// HTTP client for the public API: cookie session plus X-CSRF-Token on every non-GET, JSON in and out, uploads with progress.
import { at } from './base.ts';

export class ApiError extends Error {
  /** Seconds from a Retry-After header (a locked-out login). */
  retryAfter?: number;
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/**
 * The CSRF cookie is named after the server's port (`csrf_token_P5000`). Behind a proxy the browser's port may differ,
 * so fall back to any `csrf_token_P*` cookie.
 */
export function csrfToken(): string | undefined {
  const cookies = document.cookie.split(';').map((c) => c.trim());
  const port = location.port || (location.protocol === 'https:' ? '443' : '80');
  let fallback: string | undefined;
  for (const c of cookies) {
    const eq = c.indexOf('=');
    if (eq < 0) continue;
    const name = c.slice(0, eq);
    const value = decodeURIComponent(c.slice(eq + 1));
    if (name === `csrf_token_P${port}`) return value;
    if (name.startsWith('csrf_token_P')) fallback ??= value;
  }
  return fallback;
}

function headersFor(method: string, json: boolean): Record<string, string> {
  const h: Record<string, string> = {};
  if (json) h['Content-Type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD') {
    const token = csrfToken();
    if (token) h['X-CSRF-Token'] = token;
  }
  return h;
}

async function errorFrom(res: Response): Promise<ApiError> {
  let message = `${res.status} ${res.statusText}`;
  try {
    const text = await res.text();
    try {
      const body = JSON.parse(text) as { error?: string };
      if (body && typeof body.error === 'string') message = body.error;
    } catch {
      // Some answers (e.g. unselect) are plain text by design.
      if (text && text.length < 300 && !text.includes('<')) message = text;
    }
  } catch {
    // body unreadable: keep the status line
  }
  const err = new ApiError(res.status, message);
  const retry = Number(res.headers.get('Retry-After'));
  if (retry > 0) err.retryAfter = retry;
  return err;
}

/**
 * Called on a 401/403 from any API call but the login itself: the store checks whether the login is still there (a
 * 403 may only be a missing right) and, if not, shows the "login expired" overlay.
 */
let onDenied: ((status: number) => void) | undefined;
export function whenDenied(fn: (status: number) => void): void {
  onDenied = fn;
}

export async function request<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(at(path), {
    method,
    credentials: 'same-origin',
    headers: headersFor(method, body !== undefined),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    if ((res.status === 401 || res.status === 403) && !path.startsWith('/api/login')) onDenied?.(res.status);
    throw await errorFrom(res);
  }
  if (res.status === 204) return undefined as T;
  const type = res.headers.get('Content-Type') ?? '';
  if (type.includes('json')) return (await res.json()) as T;
  return (await res.text()) as T;
}

export const get = <T = unknown>(path: string) => request<T>('GET', path);
export const post = <T = unknown>(path: string, body: unknown = {}) => request<T>('POST', path, body);
export const put = <T = unknown>(path: string, body: unknown = {}) => request<T>('PUT', path, body);
export const patch = <T = unknown>(path: string, body: unknown = {}) => request<T>('PATCH', path, body);
export const del = <T = unknown>(path: string) => request<T>('DELETE', path);

/** Encodes each segment of a storage path for use in a URL. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** Multipart upload through XHR, because fetch cannot report upload progress. */
export function upload<T>(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', at(path));
    xhr.withCredentials = true;
    const token = csrfToken();
    if (token) xhr.setRequestHeader('X-CSRF-Token', token);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      let body: unknown = xhr.responseText;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON
      }
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(body as T);
      } else {
        const msg = body && typeof body === 'object' && 'error' in body ? String((body as { error: unknown }).error) : `${xhr.status} ${xhr.statusText}`;
        if (xhr.status === 401 || xhr.status === 403) onDenied?.(xhr.status);
        reject(new ApiError(xhr.status, msg));
      }
    };
    xhr.onerror = () => reject(new ApiError(0, 'Upload failed: connection lost'));
    xhr.send(form);
  });
}

export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
