// Config store: loads config.yaml, validates it against the schema, answers typed settings and saves changes atomically.
// Only what the user set is kept in the file (the raw document); defaults are merged in memory.
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { parseDocument, LineCounter, stringify, isNode } from 'yaml';
import { Value } from './typebox.ts';
import type { TSchema } from 'typebox';
import { Schema, type Config } from './schema.ts';
import { configSlice, type ConfigSlice, type Section } from './config-slice.ts';
import { writeFileAtomic } from '../core/atomic-file.ts';
import { invalid } from '../core/errors.ts';
import { deepMerge } from '../core/deep-merge.ts';
import { isPlain, type Plain } from '../core/plain.ts';
import { Listeners } from '../core/listeners.ts';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}


function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const child of Object.values(v as object)) deepFreeze(child);
  }
  return v;
}

export function effectiveConfig(raw: unknown): Config {
  const withDefaults = Value.Default(Schema, structuredClone(raw ?? {})) as Config;
  return withDefaults;
}

/** First schema problem of a candidate document (or of one section, under `prefix`), or undefined when valid. */
export function firstProblem(candidate: unknown, schema: TSchema = Schema, prefix: string[] = []): { path: string[]; message: string } | undefined {
  // The cheap check first: enumerating errors walks the schema with bookkeeping for every error path.
  if (Value.Check(schema, candidate)) return undefined;
  for (const e of Value.Errors(schema, candidate)) {
    const path = e.instancePath.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    return { path: [...prefix, ...path], message: e.message };
  }
  return undefined;
}

const SECTIONS = Schema.properties as Record<string, TSchema>;

/**
 * First problem of a document's settings in effect (`effectiveConfig(raw)`), as firstProblem gives it, checking only the
 * sections the document sets: the others hold their defaults, valid by construction (test/config/defaults.test.ts), and
 * checking the whole schema was ≈ 12 ms of every start. Sections in schema order, as firstProblem finds them.
 */
export function firstProblemOfSet(raw: Plain, effective: Config): { path: string[]; message: string } | undefined {
  for (const key of Object.keys(SECTIONS)) {
    if (!Object.hasOwn(raw, key)) continue;
    const problem = firstProblem((effective as Record<string, unknown>)[key], SECTIONS[key], [key]);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * The settings in effect after a change from `before` (raw and effective) to `nextRaw`, with its first problem: only
 * the top-level sections whose stored value changed get defaults and validation again (sections are independent in
 * the schema; others are taken over as they are). The whole schema cost 10–15 ms per save, four times in a first start.
 */
export function changedEffective(beforeRaw: Plain, before: Config, nextRaw: Plain): { next: Config; problem?: { path: string[]; message: string } } {
  const next: Record<string, unknown> = { ...before };
  for (const key of new Set([...Object.keys(beforeRaw), ...Object.keys(nextRaw)])) {
    if (JSON.stringify(beforeRaw[key]) === JSON.stringify(nextRaw[key])) continue;
    const section = Object.hasOwn(SECTIONS, key) ? SECTIONS[key] : undefined;
    if (section === undefined) {
      // Not a section Gantry knows (the root keeps unknown ones as they are, like a plugin's settings).
      if (Object.hasOwn(nextRaw, key)) next[key] = structuredClone(nextRaw[key]);
      else delete next[key];
      continue;
    }
    next[key] = Value.Default(section, structuredClone(nextRaw[key]));
    const problem = firstProblem(next[key], section, [key]);
    if (problem) return { next: next as Config, problem };
  }
  // The key order a whole recomputation gives (the stored sections in file order, then the others in schema order),
  // so `effectiveHash()` is the same as after a restart.
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(nextRaw)) ordered[key] = next[key];
  for (const key of Object.keys(SECTIONS)) if (!Object.hasOwn(nextRaw, key)) ordered[key] = next[key];
  return { next: ordered as Config };
}

export type ConfigListener = (config: Config, previous: Config) => void;

export class ConfigStore {
  private raw: Plain;
  private effective: Config;
  private readonly listeners = new Listeners<Parameters<ConfigListener>>();
  /** Tail of the write queue: changes apply one at a time, each to the state the previous one committed. */
  private queue: Promise<unknown> = Promise.resolve();

  /** `effective` when the caller has computed it already (defaults over the whole schema cost ≈ 20 ms at start). */
  private constructor(readonly path: string, raw: Plain, effective: Config = effectiveConfig(raw)) {
    this.raw = raw;
    this.effective = deepFreeze(effective);
  }

  /** Loads and validates the file; a missing file means "all defaults". Throws ConfigError naming file, line and problem. */
  static async load(path: string): Promise<ConfigStore> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new ConfigStore(path, {});
      throw new ConfigError(`Cannot read ${path}: ${(err as Error).message}`);
    }
    const { raw, effective } = ConfigStore.parse(path, text);
    return new ConfigStore(path, raw, effective);
  }

  /** For tests and the CLI: a store over an in-memory document that still saves to `path`. */
  static fromObject(path: string, raw: Plain): ConfigStore {
    const effective = effectiveConfig(raw);
    const problem = firstProblemOfSet(raw, effective);
    if (problem) throw new ConfigError(`${path}: ${problem.path.join('.') || '(root)'}: ${problem.message}`);
    return new ConfigStore(path, structuredClone(raw), effective);
  }

  private static parse(path: string, text: string): { raw: Plain; effective: Config } {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter, prettyErrors: false });
    if (doc.errors.length > 0) {
      const e = doc.errors[0];
      const pos = lineCounter.linePos(e.pos[0]);
      throw new ConfigError(`${path}:${pos.line}:${pos.col}: invalid YAML: ${e.message.split('\n')[0]}`);
    }
    const raw = doc.toJS() ?? {};
    if (!isPlain(raw)) throw new ConfigError(`${path}:1: the top level must be a mapping of sections`);
    const effective = effectiveConfig(raw);
    const problem = firstProblemOfSet(raw, effective);
    if (problem) {
      let where = path;
      for (let i = problem.path.length; i >= 0; i--) {
        const node = doc.getIn(problem.path.slice(0, i), true);
        if (isNode(node) && node.range) {
          where = `${path}:${lineCounter.linePos(node.range[0]).line}`;
          break;
        }
      }
      throw new ConfigError(`${where}: ${problem.path.join('.') || '(root)'}: ${problem.message}`);
    }
    return { raw, effective };
  }

  /** The settings in effect: defaults merged with the file. Frozen; a new object after every change. */
  get current(): Config {
    return this.effective;
  }

  /** What the file holds (overrides only), as a copy. */
  get overrides(): Plain {
    return structuredClone(this.raw);
  }

  /** The named sections only, for a service that owns them: read live, changes reported, saves go through this store. */
  slice<K extends Section>(...sections: K[]): ConfigSlice<K> {
    return configSlice(this, sections);
  }

  onChange(fn: ConfigListener): () => void {
    return this.listeners.add(fn);
  }

  /**
   * Merges a partial tree into the stored document (objects merge, arrays and scalars replace; `null` stores null),
   * validates the result and saves it atomically. An invalid patch throws INVALID_REQUEST naming the field and changes nothing.
   */
  async patch(partial: Plain): Promise<Config> {
    return this.serially(() => this.replace(deepMerge(this.raw, partial) as Plain));
  }

  /** Removes a key path from the stored document so its default applies again. */
  async unset(path: string[]): Promise<Config> {
    return this.serially(() => this.unsetNow(path));
  }

  /**
   * Runs one change after every earlier one has committed (or failed), so concurrent saves never merge against a
   * state that is about to be replaced: without it two saves both start from the same document and one is lost.
   */
  private serially(change: () => Promise<Config>): Promise<Config> {
    const run = this.queue.then(change, change);
    this.queue = run.catch(() => {});
    return run;
  }

  private async unsetNow(path: string[]): Promise<Config> {
    const nextRaw = structuredClone(this.raw);
    let node: unknown = nextRaw;
    for (let i = 0; i < path.length - 1; i++) {
      if (!isPlain(node)) return this.effective;
      node = node[path[i]];
    }
    if (isPlain(node)) delete node[path[path.length - 1]];
    return this.replace(nextRaw);
  }

  private async replace(nextRaw: Plain): Promise<Config> {
    const { next, problem } = changedEffective(this.raw, this.effective, nextRaw);
    if (problem) throw invalid(`Invalid value for ${problem.path.join('.')}: ${problem.message}`);
    // Memory follows only once the file holds the change: nobody is ever served a value config.yaml does not have.
    await writeFileAtomic(this.path, stringify(nextRaw), 0o600);
    const previous = this.effective;
    this.raw = nextRaw;
    this.effective = deepFreeze(next);
    this.listeners.emit(this.effective, previous);
    return this.effective;
  }

  /**
   * The settings' hash as clients compare it (`connected.config_hash` on the push channel, `SettingsUpdated.config_hash`):
   * over what the file holds, so it changes exactly when a setting is saved.
   */
  hash(): string {
    return createHash('sha1').update(JSON.stringify(this.raw)).digest('hex');
  }

  /** Hash of the settings in effect, defaults included (`SettingsUpdated.effective_hash`). */
  effectiveHash(): string {
    return createHash('sha1').update(JSON.stringify(this.effective)).digest('hex');
  }
}
