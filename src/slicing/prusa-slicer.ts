// PrusaSlicer adapter: drives the `prusa-slicer` command line (flat .ini profiles, progress from its stdout).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, access } from 'node:fs/promises';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, delimiter } from 'node:path';
import { DomainError, invalid } from '../core/errors.ts';
import { setOwn } from '../core/plain.ts';
import type { ProfileData, SliceRequest, SlicerAdapter } from './types.ts';
import { shown } from '../core/text.ts';

const KEY_PATTERN = /^[a-z0-9_]+$/;

/** Parses flat `key = value` ini text; comments (`#`, `;`) and blank lines are skipped. */
export function parseIni(text: string): ProfileData {
  const out: ProfileData = {};
  let lineNo = 0;
  for (const raw of text.split(/\r?\n/)) {
    lineNo++;
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    if (line.startsWith('[')) {
      throw invalid(`line ${lineNo}: sections ([...]) are vendor bundles; export a flat config from PrusaSlicer (File > Export > Export Config)`);
    }
    const eq = line.indexOf('=');
    if (eq <= 0) throw invalid(`line ${lineNo}: expected "key = value"`);
    const key = line.slice(0, eq).trim();
    if (!KEY_PATTERN.test(key)) throw invalid(`line ${lineNo}: invalid key "${key}"`);
    setOwn(out, key, line.slice(eq + 1).trim());
  }
  return out;
}

export function toIni(settings: ProfileData): string {
  let s = '';
  for (const [k, v] of Object.entries(settings)) {
    // A newline in a value would smuggle extra keys into the file the slicer reads.
    if (!KEY_PATTERN.test(k) || /[\r\n]/.test(v)) throw invalid(`Invalid slicer setting ${shown(k)}`);
    s += `${k} = ${v}\n`;
  }
  return s;
}

export interface PrusaSlicerOptions {
  /** Its slice of the settings (`config.slice('slicing')`), read live: the binary (resolved on PATH when bare) and
   *  the hard limit for one slicing run, in seconds. */
  config: { get(): { slicing: { prusaSlicerPath: string; timeout: number } } };
}

export class PrusaSlicerAdapter implements SlicerAdapter {
  readonly key = 'prusaslicer';
  readonly displayName = 'PrusaSlicer';
  readonly sameDevice = true;
  readonly sourceExtensions = ['stl', '3mf', 'obj'] as const;
  readonly destinationExtension = 'gcode';
  private cachedDefaults?: { binary: string; data: ProfileData };

  constructor(private readonly opts: PrusaSlicerOptions) {}

  /** Installed = an executable file at the configured path or on PATH; no process is spawned (start-up stays fast). */
  async probe(): Promise<boolean> {
    return (await findExecutable(this.opts.config.get().slicing.prusaSlicerPath)) !== undefined;
  }

  async defaults(): Promise<ProfileData> {
    const bin = this.opts.config.get().slicing.prusaSlicerPath;
    if (this.cachedDefaults?.binary === bin) return { ...this.cachedDefaults.data };
    const dir = await mkdtemp(join(tmpdir(), 'gantry-prusa-'));
    try {
      const file = join(dir, 'defaults.ini');
      const { code, output } = await run(bin, ['--save', file], 30_000);
      if (code !== 0) throw new DomainError('INTERNAL', `PrusaSlicer could not write its defaults: ${lastLines(output)}`);
      const data = parseIni(await readFile(file, 'utf8'));
      this.cachedDefaults = { binary: bin, data };
      return { ...data };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  parseNative(text: string): ProfileData {
    return parseIni(text);
  }

  async slice(req: SliceRequest): Promise<void> {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-slice-'));
    try {
      const settings = { ...req.settings, ...printerSettings(req) };
      const ini = join(dir, 'profile.ini');
      await writeFile(ini, toIni(settings));
      const args = ['--export-gcode', '--load', ini, '-o', req.outputPath];
      if (req.position) args.push('--center', `${req.position.x},${req.position.y}`);
      args.push(req.modelPath);
      // stdbuf makes PrusaSlicer's progress lines arrive as they happen instead of at exit.
      const bin = this.opts.config.get().slicing.prusaSlicerPath;
      let best = 0;
      const { code, signal, output } = await run('stdbuf', ['-oL', '-eL', bin, ...args], this.opts.config.get().slicing.timeout * 1000, req.signal, (line) => {
        const m = /^(\d{1,3}) => /.exec(line);
        if (m) {
          const f = Math.min(Number(m[1]), 100) / 100;
          if (f > best) {
            best = f;
            req.onProgress(f);
          }
        }
      });
      if (req.signal.aborted) throw new DomainError('CONFLICT', 'Slicing cancelled');
      if (code !== 0) {
        const why = /could not fit|Objects could not fit/i.test(output) ? 'the object does not fit on the bed'
          : signal ? `PrusaSlicer was killed by ${signal}` : lastLines(output);
        throw new DomainError('INTERNAL', `Slicing failed: ${why}`);
      }
      req.onProgress(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

/** Bed and nozzle come from the printer profile so the G-code fits the printer it will run on. */
function printerSettings(req: SliceRequest): ProfileData {
  const p = req.printer;
  if (!p) return {};
  const { width: w, depth: d, height: h } = p.volume;
  const centred = p.volume.origin === 'center';
  const x0 = centred ? -w / 2 : 0, y0 = centred ? -d / 2 : 0;
  const out: ProfileData = {
    bed_shape: `${x0}x${y0},${x0 + w}x${y0},${x0 + w}x${y0 + d},${x0}x${y0 + d}`,
    max_print_height: String(h),
    nozzle_diameter: Array(Math.max(1, p.extruder.count)).fill(String(p.extruder.nozzleDiameter)).join(','),
  };
  return out;
}

async function findExecutable(bin: string): Promise<string | undefined> {
  const candidates = bin.includes('/') ? [bin] : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, bin));
  for (const c of candidates) {
    try {
      await access(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

function lastLines(output: string): string {
  const lines = output.split('\n').map((l) => l.trim()).filter((l) => l && !l.includes('[trace]'));
  return lines.slice(-3).join(' | ') || 'no output';
}

function run(cmd: string, args: string[], timeoutMs: number, signal?: AbortSignal, onLine?: (line: string) => void):
  Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let partial = '';
    const onData = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      if (output.length < 64 * 1024) output += text;
      if (!onLine) return;
      partial += text;
      let nl: number;
      while ((nl = partial.indexOf('\n')) !== -1) {
        onLine(partial.slice(0, nl).trim());
        partial = partial.slice(nl + 1);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(kill, timeoutMs);
    signal?.addEventListener('abort', kill, { once: true });
    child.on('error', (err) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      reject(err);
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      resolve({ code, signal: sig, output });
    });
  });
}
