// Helpers for recovery tests: a layered G-code print with known temperatures, a Gantry child process, the journal on disk.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

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

export interface Child { proc: ChildProcess; url: string; key: string; out: () => string }

const CHILD = new URL('./child-server.ts', import.meta.url).pathname;

export function startChild(baseDir: string, settings: Record<string, unknown>): Promise<Child> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, baseDir, JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    proc.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /READY (\S+) (\S+)/.exec(out);
      if (m) resolve({ proc, url: m[1], key: m[2], out: () => out });
    });
    proc.on('exit', (code, signal) => reject(new Error(`child exited (${code ?? signal}) before it was up: ${out}`)));
  });
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
