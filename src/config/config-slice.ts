// A service's own view of the settings: the sections it names, read live, watched and saved through the one ConfigStore.
import type { Config } from './schema.ts';

export type Section = keyof Config;

/** A partial tree under the slice's own sections (ConfigStore.patch merges it: objects merge, the rest replaces). */
export type SlicePatch<K extends Section> = { [S in K]?: Record<string, unknown> };

export interface ConfigSlice<K extends Section> {
  /** The sections in effect now: frozen, and a new object after a save (read it each time, never keep it). */
  get(): Pick<Config, K>;
  /** Runs after a save that changed one of these sections (saves elsewhere are not reported); returns the unsubscribe. */
  onChange(fn: (now: Pick<Config, K>, before: Pick<Config, K>) => void): () => void;
  /** Saves a change under these sections; validated and written atomically by the store before memory follows. */
  patch(partial: SlicePatch<K>): Promise<void>;
  /** Removes a stored value under these sections so its default applies again. */
  unset(path: [K, ...string[]]): Promise<void>;
}

/** What a slice needs of the store (ConfigStore has it). */
export interface SliceSource {
  readonly current: Config;
  onChange(fn: (now: Config, before: Config) => void): () => void;
  patch(partial: Record<string, unknown>): Promise<Config>;
  unset(path: string[]): Promise<Config>;
}

export function configSlice<K extends Section>(store: SliceSource, sections: readonly K[]): ConfigSlice<K> {
  const pick = (c: Config): Pick<Config, K> => {
    const out = {} as Pick<Config, K>;
    for (const s of sections) out[s] = c[s];
    return Object.freeze(out);
  };
  // get() is called on request paths; the picked view is rebuilt only when the store has a new document.
  let source = store.current;
  let view = pick(source);
  const get = (): Pick<Config, K> => {
    if (store.current !== source) {
      source = store.current;
      view = pick(source);
    }
    return view;
  };
  // Every save rebuilds every section, so sameness is by content; saves are rare, sections small.
  const changed = (now: Config, before: Config) => sections.some((s) => JSON.stringify(now[s]) !== JSON.stringify(before[s]));
  const own = (key: string) => {
    if (!(sections as readonly string[]).includes(key)) throw new Error(`config slice [${sections.join(', ')}] cannot write ${key}`);
  };
  return {
    get,
    onChange: (fn) => store.onChange((now, before) => { if (changed(now, before)) fn(pick(now), pick(before)); }),
    patch: async (partial) => {
      for (const key of Object.keys(partial)) own(key);
      await store.patch(partial);
    },
    unset: async (path) => {
      own(path[0]);
      await store.unset(path);
    },
  };
}
