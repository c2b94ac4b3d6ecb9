// Moonraker's database (server.database.*): namespaces of JSON values addressed by dot-separated keys, one JSON
// file on disk, written before a write is acknowledged. Mainsail and Fluidd keep their settings here.
import { readFile } from 'node:fs/promises';
import { setAside, writeFileAtomic } from '../core/atomic-file.ts';
import { jsonBoundsViolation } from '../core/bounded-json.ts';
import { isPlain, setOwn, type Plain } from '../core/plain.ts';
import type { Logger } from '../core/logger.ts';
import { RpcError, badParam } from './rpc-errors.ts';

/** One value a client stores (a UI's whole settings tree fits many times). */
const MAX_VALUE_BYTES = 1024 * 1024;
const MAX_DB_BYTES = 32 * 1024 * 1024;
const MAX_DEPTH = 32;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** `a.b.c` or ['a','b','c'] → path parts (each non-empty). */
export function keyParts(key: unknown): string[] {
  const parts = typeof key === 'string' ? key.split('.') : Array.isArray(key) && key.every((k) => typeof k === 'string') ? key as string[] : null;
  if (!parts || parts.length === 0 || parts.some((p) => p === '' || p.length > 256)) throw badParam('Invalid database key');
  if (parts.length > MAX_DEPTH) throw badParam('Database key is nested too deep');
  return parts;
}

export class MoonrakerDatabase {
  private data: Plain = {};
  private loaded: Promise<void> | undefined;
  private bytes = 0;

  constructor(private readonly file: string, private readonly logger: Logger) {}

  load(): Promise<void> {
    this.loaded ??= readFile(this.file, 'utf8').then(async (text) => {
      try {
        const v: unknown = JSON.parse(text);
        if (isPlain(v)) this.data = v;
        this.bytes = text.length;
      } catch (err) {
        this.logger.warn({ err, file: await setAside(this.file) }, 'moonraker database unreadable, set aside; starting a new one');
      }
    }, (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') this.logger.warn({ err }, 'moonraker database unreadable; starting a new one');
    });
    return this.loaded;
  }

  async namespaces(): Promise<string[]> {
    await this.load();
    return Object.keys(this.data);
  }

  async get(namespace: unknown, key?: unknown): Promise<unknown> {
    await this.load();
    const ns = this.namespace(namespace, false);
    if (key === undefined || key === null) return ns;
    let at: unknown = ns;
    for (const part of keyParts(key)) {
      if (!isPlain(at) || !Object.hasOwn(at, part)) throw new RpcError(404, `Key '${String(key)}' in namespace '${String(namespace)}' not found`);
      at = at[part];
    }
    return at;
  }

  async post(namespace: unknown, key: unknown, value: unknown): Promise<unknown> {
    await this.load();
    if (value === undefined) throw badParam('No value given');
    const why = jsonBoundsViolation(value, { maxDepth: MAX_DEPTH, maxBytes: MAX_VALUE_BYTES });
    if (why) throw badParam(`Value is ${why}`);
    const parts = keyParts(key);
    const ns = this.namespace(namespace, true);
    let at = ns;
    for (const part of parts.slice(0, -1)) {
      const next = Object.hasOwn(at, part) ? at[part] : undefined;
      if (!isPlain(next)) setOwn(at, part, {});
      at = at[part] as Plain;
    }
    setOwn(at, parts[parts.length - 1], value);
    await this.save();
    return value;
  }

  async delete(namespace: unknown, key: unknown): Promise<unknown> {
    await this.load();
    const parts = keyParts(key);
    const ns = this.namespace(namespace, false);
    let at: Plain = ns;
    for (const part of parts.slice(0, -1)) {
      const next = Object.hasOwn(at, part) ? at[part] : undefined;
      if (!isPlain(next)) throw new RpcError(404, `Key '${parts.join('.')}' in namespace '${String(namespace)}' not found`);
      at = next;
    }
    const last = parts[parts.length - 1];
    if (!Object.hasOwn(at, last)) throw new RpcError(404, `Key '${parts.join('.')}' in namespace '${String(namespace)}' not found`);
    const removed = at[last];
    delete at[last];
    if (Object.keys(ns).length === 0) delete this.data[String(namespace)];
    await this.save();
    return removed;
  }

  private namespace(name: unknown, create: boolean): Plain {
    if (typeof name !== 'string' || !NAME.test(name)) throw badParam('Invalid namespace');
    const ns = Object.hasOwn(this.data, name) ? this.data[name] : undefined;
    if (isPlain(ns)) return ns;
    if (!create) throw new RpcError(404, `Namespace '${name}' not found`);
    const fresh: Plain = {};
    setOwn(this.data, name, fresh);
    return fresh;
  }

  private async save(): Promise<void> {
    const text = JSON.stringify(this.data);
    if (text.length > MAX_DB_BYTES) throw new RpcError(413, 'The database is full');
    this.bytes = text.length;
    await writeFileAtomic(this.file, text);
  }

  get size(): number {
    return this.bytes;
  }
}
