// The contract every power device provider meets (PSU Control's sub-plugin contract, docs/reference/plugins.md §1.4):
// switch on, switch off, read the state back; each call bounded by the device's timeout, failing with a clear error.
import { DomainError, ErrorCodes } from '../../core/errors.ts';

export interface PowerProvider {
  /** What it is, for messages ("Tasmota at 10.0.0.5"). */
  readonly label: string;
  setPower(on: boolean): Promise<void>;
  /** The device's own state; throws when it does not answer. */
  readState(): Promise<boolean>;
  /** Frees what it holds (an MQTT subscription). */
  close?(): void;
}

/** The device did not answer or answered nonsense: the API answers 502 with the message. */
export class DeviceError extends DomainError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCodes.INTERNAL, message, options);
    this.name = 'DeviceError';
  }
}

export function deviceError(label: string, what: string, cause?: unknown): DomainError {
  const why = cause instanceof Error ? `: ${cause.name === 'TimeoutError' || cause.name === 'AbortError' ? 'no answer in time' : cause.message}` : '';
  return new DeviceError(`${label} ${what}${why}`, { cause });
}

/** One HTTP request with a timeout; the answer's text, or an error naming the device and the status. */
export async function request(label: string, url: string, timeoutS: number, init: RequestInit = {}): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(Math.round(timeoutS * 1000)) });
  } catch (err) {
    throw deviceError(label, 'did not answer', (err as Error).cause instanceof Error && (err as Error).name === 'TypeError' ? (err as Error).cause : err);
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw deviceError(label, `answered HTTP ${res.status}${res.status === 401 || res.status === 403 ? ' (check the credentials)' : ''}`);
  return text;
}

export function json(label: string, text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch { /* below */ }
  throw deviceError(label, `answered something that is not a JSON object: ${text.slice(0, 80)}`);
}

/** `host`, `host:port` or a URL → base URL without a trailing slash. */
export function baseUrl(address: string): string {
  let a = address.trim();
  while (a.endsWith('/')) a = a.slice(0, -1);
  return /^https?:\/\//i.test(a) ? a : `http://${a}`;
}
