// Strict reading of users.yaml and groups.yaml: a mapping of names to mappings, or an error that names file and line.
import { readFile } from 'node:fs/promises';
import { parseDocument, LineCounter, isMap, isPair, isScalar, isNode } from 'yaml';
import { ConfigError } from '../config/config-store.ts';

export interface RecordFile {
  /** False when the file does not exist (a first run); true for an existing file, even an empty one. */
  found: boolean;
  records: Map<string, Record<string, unknown>>;
}

/**
 * Reads `path` as `name: {field: value, ...}` entries. Syntax errors, a top level that is not a mapping and entries
 * that are not mappings throw ConfigError as `path:line[:col]: problem`, so start-up can say exactly what to repair.
 */
export async function readRecordFile(path: string): Promise<RecordFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { found: false, records: new Map() };
    throw new ConfigError(`Cannot read ${path}: ${(err as Error).message}`);
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const at = lines.linePos(e.pos[0]);
    throw new ConfigError(`${path}:${at.line}:${at.col}: invalid YAML: ${e.message.split('\n')[0]}`);
  }
  const records = new Map<string, Record<string, unknown>>();
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return { found: true, records };
  const lineOf = (node: unknown) => (isNode(node) && node.range ? lines.linePos(node.range[0]).line : 1);
  if (!isMap(doc.contents)) throw new ConfigError(`${path}:${lineOf(doc.contents)}: expected a mapping of names to records`);
  for (const pair of doc.contents.items) {
    if (!isPair(pair)) continue;
    const name = isScalar(pair.key) ? String(pair.key.value) : undefined;
    if (name === undefined) throw new ConfigError(`${path}:${lineOf(pair.key)}: expected a name`);
    const value: unknown = isNode(pair.value) ? pair.value.toJSON() : pair.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ConfigError(`${path}:${lineOf(pair.key)}: ${name}: expected a mapping of fields, found ${value === null ? 'nothing' : Array.isArray(value) ? 'a list' : typeof value}`);
    }
    records.set(name, value as Record<string, unknown>);
  }
  return { found: true, records };
}
