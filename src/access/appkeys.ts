// Application keys: the request → decision → poll workflow through which apps obtain a per-user key, and the
// persisted keys themselves (keys.yaml, atomic writes), resolved as API keys of the user who approved them.
import { readFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import type { Clock } from '../core/clock.ts';
import { writeFileAtomic } from '../core/atomic-file.ts';
import { DomainError, ErrorCodes, invalid, notFound, forbidden } from '../core/errors.ts';
import { Listeners } from '../core/listeners.ts';
import { SecretProbe, generateApiKey, safeEqual } from './keys.ts';

export interface PendingAppRequest {
  appId: string;
  appToken: string;
  /** The only user allowed to approve it, or null for anyone with the grant permission. */
  userId: string | null;
  userToken: string;
  /** When it was asked for, on the monotonic clock (ms): its timeouts hold whatever the wall clock does. */
  created: number;
}

export interface AppKey {
  appId: string;
  apiKey: string;
  userId: string;
}

export type PollResult = { state: 'pending' } | { state: 'granted'; apiKey: string } | undefined;

export interface AppKeyTimeouts {
  /** A request nobody polls for this long is dropped (apps poll about once per second). */
  idleMs: number;
  /** Absolute limit for a request, decided or not. */
  maxMs: number;
  /** Requests awaiting a decision from one address at most, and from everyone together (429 beyond). */
  maxPendingPerClient: number;
  maxPending: number;
}

/** App names are what a dialog shows ("PrusaSlicer", "OctoPrint Anywhere"): one short line. */
export const MAX_APP_NAME = 256;

interface PendingState extends PendingAppRequest { lastPoll: number; client: string }
interface Approval { appId: string; userId: string; created: number }

export class AppKeyService {
  private pending = new Map<string, PendingState>(); // by app token
  private approved = new Map<string, Approval>(); // by app token
  private keys: AppKey[] = [];
  private changes: Promise<unknown> = Promise.resolve();
  private readonly requestListeners = new Listeners<[PendingAppRequest]>();
  private readonly endListeners = new Listeners<[string]>();
  private sweeper: NodeJS.Timeout | undefined;
  private running = false;
  private readonly timeouts: AppKeyTimeouts;

  constructor(private readonly path: string, private readonly clock: Clock, timeouts: Partial<AppKeyTimeouts> = {}) {
    this.timeouts = { idleMs: 5_000, maxMs: 600_000, maxPendingPerClient: 10, maxPending: 100, ...timeouts };
  }

  async start(): Promise<void> {
    await this.load();
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /**
   * Expiry is also checked lazily on every access; the timer only makes sure UIs hear `end` for abandoned requests,
   * so it runs while there are requests (pending, or granted and not yet collected) and stops with the last.
   */
  private sweepWhileWaiting(): void {
    if (!this.running || this.sweeper !== undefined) return;
    this.sweeper = setInterval(() => this.sweep(), 1_000);
    this.sweeper.unref();
  }

  /** A new request waits for a decision (the push channel shows it to users who may grant it). */
  onRequest(fn: (r: PendingAppRequest) => void): () => void {
    return this.requestListeners.add(fn);
  }

  /** A request was decided, timed out or abandoned (UIs close their prompt). */
  onEnd(fn: (userToken: string) => void): () => void {
    return this.endListeners.add(fn);
  }

  /**
   * Anyone may ask, without credentials, and each request waits for a person; so what is held is bounded: names of at
   * most MAX_APP_NAME characters, `maxPendingPerClient` requests per address (`client`) and `maxPending` in all.
   * Unbounded, a flood of 60 KB names grew the server by 100 MB in 5 s, and polling kept them for 10 minutes.
   */
  request(appId: string, userId: string | null, client = ''): PendingAppRequest {
    this.sweep();
    if (!appId.trim()) throw invalid('No app name provided');
    // eslint-disable-next-line no-control-regex
    if (appId.length > MAX_APP_NAME || /[\u0000-\u001f\u007f]/.test(appId)) throw invalid(`Invalid app name (one line of at most ${MAX_APP_NAME} characters)`);
    if (userId !== null && userId.length > 64) throw invalid('Invalid user name');
    let mine = 0;
    for (const p of this.pending.values()) if (p.client === client) mine++;
    if (mine >= this.timeouts.maxPendingPerClient || this.pending.size >= this.timeouts.maxPending) {
      throw new DomainError(ErrorCodes.TOO_MANY_REQUESTS, 'Too many app key requests awaiting a decision, try again later');
    }
    const now = this.clock.monotonic();
    const r: PendingState = { appId, appToken: generateApiKey(), userId, userToken: generateApiKey(), created: now, lastPoll: now, client };
    this.pending.set(r.appToken, r);
    this.sweepWhileWaiting();
    const pub = publicRequest(r);
    this.requestListeners.emit(pub);
    return pub;
  }

  /** What the app learns when it polls; a granted key is handed out exactly once. */
  async poll(appToken: string): Promise<PollResult> {
    this.sweep();
    const p = this.pending.get(appToken);
    if (p) {
      p.lastPoll = this.clock.monotonic();
      return { state: 'pending' };
    }
    const a = this.approved.get(appToken);
    if (!a) return undefined;
    this.approved.delete(appToken);
    const key = await this.generate(a.userId, a.appId);
    return { state: 'granted', apiKey: key.apiKey };
  }

  /** Pending requests the user may see: addressed to them or to nobody in particular. */
  pendingFor(userId: string): PendingAppRequest[] {
    this.sweep();
    return [...this.pending.values()].filter((p) => p.userId === null || p.userId === userId).map(publicRequest);
  }

  pendingRequest(appToken: string): PendingAppRequest | undefined {
    this.sweep();
    const p = this.pending.get(appToken);
    return p && publicRequest(p);
  }

  /** Records the decision of `userId` (who must be allowed to grant; the caller checks the permission). */
  decide(userToken: string, userId: string, allow: boolean): void {
    this.sweep();
    const p = [...this.pending.values()].find((x) => x.userToken === userToken);
    if (!p || (p.userId !== null && p.userId !== userId)) throw notFound('Unknown request');
    this.pending.delete(p.appToken);
    if (allow) {
      this.approved.set(p.appToken, { appId: p.appId, userId, created: p.created });
      this.sweepWhileWaiting();
    }
    this.emitEnd(p.userToken);
  }

  listKeys(userId?: string): AppKey[] {
    return this.keys.filter((k) => userId === undefined || k.userId === userId).map((k) => ({ ...k }));
  }

  /** Creates a key for user+app, or returns the existing one (app names compare case-insensitively). */
  async generate(userId: string, appId: string): Promise<AppKey> {
    if (!appId.trim()) throw invalid('No app name provided');
    return this.change((keys) => {
      const existing = keys.find((k) => k.userId === userId && k.appId.toLowerCase() === appId.toLowerCase());
      if (existing) return { result: { ...existing } };
      const key: AppKey = { appId, apiKey: generateApiKey(), userId };
      return { next: [...keys, key], result: { ...key } };
    });
  }

  /** Takes over keys made elsewhere (gantry import-octoprint) unchanged, so paired apps need no new pairing. */
  async importKeys(keys: AppKey[]): Promise<void> {
    await this.change(async (live) => {
      const current = await this.read() ?? live;
      const added = keys.filter((k) => !current.some((x) => x.apiKey === k.apiKey)).map((k) => ({ ...k }));
      return { next: [...current, ...added], result: undefined };
    });
  }

  /** Revokes a key; owners may revoke their own, admins any. Unknown keys are not an error. */
  async revoke(apiKey: string, byUser: string, isAdmin: boolean): Promise<void> {
    await this.change((keys) => {
      const key = keys.find((k) => safeEqual(k.apiKey, apiKey));
      if (!key) return { result: undefined };
      if (!isAdmin && key.userId !== byUser) throw forbidden('Not allowed to revoke this key');
      return { next: keys.filter((k) => k !== key), result: undefined };
    });
  }

  /** Drops every key of a removed user. */
  async removeUser(userId: string): Promise<void> {
    await this.change((keys) => keys.some((k) => k.userId === userId)
      ? { next: keys.filter((k) => k.userId !== userId), result: undefined }
      : { result: undefined });
  }

  /**
   * One change at a time: `fn` sees the live keys and returns the next list (or none for no change); that list is
   * written first and only then becomes the live one, so a failed write changes nothing a client could use.
   */
  private change<T>(fn: (keys: readonly AppKey[]) => { next?: AppKey[]; result: T } | Promise<{ next?: AppKey[]; result: T }>): Promise<T> {
    const run = this.changes.then(async () => {
      const { next, result } = await fn(this.keys);
      if (next) {
        await this.save(next);
        this.keys = next;
      }
      return result;
    });
    this.changes = run.catch(() => {});
    return run;
  }

  /** The owner of an app key (constant-time over all keys), for the API key lookup. */
  ownerOf(apiKey: string | SecretProbe): string | undefined {
    const probe = typeof apiKey === 'string' ? new SecretProbe(apiKey) : apiKey;
    let owner: string | undefined;
    for (const k of this.keys) if (probe.matches(k.apiKey)) owner = k.userId;
    return owner;
  }

  /** Drops requests that timed out; exposed so tests with a controlled clock need not wait for the timer. */
  sweep(): void {
    const now = this.clock.monotonic();
    for (const [token, p] of this.pending) {
      if (now - p.lastPoll > this.timeouts.idleMs || now - p.created > this.timeouts.maxMs) {
        this.pending.delete(token);
        this.emitEnd(p.userToken);
      }
    }
    for (const [token, a] of this.approved) if (now - a.created > this.timeouts.maxMs) this.approved.delete(token);
    if (this.pending.size === 0 && this.approved.size === 0 && this.sweeper !== undefined) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  private emitEnd(userToken: string): void {
    this.endListeners.emit(userToken);
  }

  private async load(): Promise<void> {
    this.keys = await this.read() ?? this.keys;
  }

  /** The keys in keys.yaml, or undefined when there is no such file yet. */
  private async read(): Promise<AppKey[] | undefined> {
    let doc: unknown;
    try {
      doc = parse(await readFile(this.path, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new Error(`Cannot read ${this.path}: ${(err as Error).message}`, { cause: err });
    }
    const keys: AppKey[] = [];
    if (!doc || typeof doc !== 'object') return keys;
    for (const [userId, list] of Object.entries(doc as Record<string, unknown>)) {
      if (!Array.isArray(list)) continue;
      for (const e of list as Array<Record<string, unknown>>) {
        if (e && typeof e.app_id === 'string' && typeof e.api_key === 'string') keys.push({ appId: e.app_id, apiKey: e.api_key, userId });
      }
    }
    return keys;
  }

  private async save(keys: readonly AppKey[]): Promise<void> {
    // By user name, which may be "constructor" or "__proto__" (an imported user): a Map, then own keys only.
    const byUser = new Map<string, Array<{ app_id: string; api_key: string }>>();
    for (const k of keys) {
      const list = byUser.get(k.userId) ?? [];
      byUser.set(k.userId, list);
      list.push({ app_id: k.appId, api_key: k.apiKey });
    }
    await writeFileAtomic(this.path, stringify(Object.fromEntries(byUser)), 0o600);
  }
}

function publicRequest(p: PendingAppRequest): PendingAppRequest {
  return { appId: p.appId, appToken: p.appToken, userId: p.userId, userToken: p.userToken, created: p.created };
}
