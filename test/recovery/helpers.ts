// Helpers for recovery tests: a layered G-code print with known temperatures, a Gantry child process, the journal on disk.
import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ROOT, startGantryProcess } from '../helpers/built-server.ts';

/** `layers` layers of `moves` extruding moves each (back and forth over `span` mm at 20 mm/s), absolute E; bed 60, hotend 200 (set without waiting). */
export function layeredGcode(layers: number, moves: number, span = 2): string {
  const lines = ['; recovery test print', 'M140 S60', 'M104 S200', 'G28', 'G90', 'M82', 'G92 E0', 'M106 S128'];
  let e = 0;
  for (let l = 0; l < layers; l++) {
    lines.push(`;LAYER:${l}`, `G1 Z${((l + 1) * 0.2).toFixed(2)} F600`);
    for (let i = 0; i < moves; i++) {
      e += 0.05;
      lines.push(`G1 X${10 + (i % 2) * span + l} Y${10 + i * 0.5} E${e.toFixed(4)} F1200`);
    }
  }
  lines.push('M107', 'M104 S0', 'M140 S0', '');
  return lines.join('\n');
}

/** The Z the file is at after its first `count` lines (what a resume at line count+1 must restore). */
export function zAfterLines(gcode: string, count: number): number | null {
  let z: number | null = null;
  for (const l of gcode.split('\n').slice(0, count)) {
    const m = /^G[01] .*Z(-?[\d.]+)/.exec(l);
    if (m) z = Number(m[1]);
    if (l.startsWith('G28')) z = 0;
  }
  return z;
}

export interface Child { proc: ChildProcess; url: string; key: string }

const BIN = join(ROOT, 'bin/gantry.js');

/**
 * `gantry serve` (the built CLI, as users run it) on `baseDir` with `settings` written to its config.yaml first; the
 * key is read back from config.yaml, since only the first start prints it.
 */
export async function startChild(baseDir: string, settings: Record<string, unknown>): Promise<Child> {
  const configFile = join(baseDir, 'config.yaml');
  const current = await readFile(configFile, 'utf8').then((t) => (parse(t) ?? {}) as Record<string, unknown>, () => ({}));
  await writeFile(configFile, stringify({ ...current, ...settings }));
  const g = await startGantryProcess(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', '--basedir', baseDir]);
  const config = parse(await readFile(configFile, 'utf8')) as { api: { key: string } };
  return { proc: g.child, url: g.url, key: config.api.key };
}

export function api(c: { url: string; key: string }, path: string, init: { method?: string; json?: unknown } = {}): Promise<Response> {
  return fetch(c.url + path, {
    method: init.method ?? (init.json !== undefined ? 'POST' : 'GET'),
    headers: { 'X-Api-Key': c.key, ...(init.json !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
}

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function journalOnDisk(baseDir: string): Promise<Json | null> {
  return readFile(join(baseDir, 'data', 'print-journal.json'), 'utf8').then((t) => JSON.parse(t) as Json, () => null);
}
