// Large-library benchmark: a built server started on a base dir holding thousands of G-code files copied in by hand (no metadata), as a farm's shared library is: its start, the first listing (which hashes every file), the analysis backlog, and listings afterwards.
// Usage: npm run bench -- library   Env: BENCH_FOLDERS (default 20), BENCH_PER_FOLDER (files per folder, default 500).
// No goal is set in an issue and OctoPrint's figures for this were not measured here; the figures are for comparing
// one version of Gantry with the next (a listing of 10,000 files took 1.9 s and one during the backlog up to 78 s
// before the listing and metadata changes of session 29).
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, ensureBuilt, startGantryProcess } from '../test/helpers/built-server.ts';

const FOLDERS = Number(process.env.BENCH_FOLDERS ?? 20);
const PER_FOLDER = Number(process.env.BENCH_PER_FOLDER ?? 500);
const TOTAL = FOLDERS * PER_FOLDER;
const FILE = `G28\nM83\n${'G1 X10 Y10 E0.5 F1200\n'.repeat(200)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024;
}

async function cpuS(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Files whose analysis is in their folder's metadata file (what survives a restart). */
async function analysedOnDisk(uploads: string): Promise<number> {
  let n = 0;
  for (const folder of await readdir(uploads)) {
    const text = await readFile(join(uploads, folder, '.metadata.json'), 'utf8').catch(() => '{}');
    try {
      n += Object.values(JSON.parse(text) as Record<string, { analysis?: unknown }>).filter((m) => m.analysis !== undefined).length;
    } catch {
      // Read while being replaced: counted next time.
    }
  }
  return n;
}

await ensureBuilt();
const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-library-'));
try {
  const uploads = join(dir, 'uploads');
  for (let f = 0; f < FOLDERS; f++) {
    await mkdir(join(uploads, `folder${f}`), { recursive: true });
    for (let i = 0; i < PER_FOLDER; i++) await writeFile(join(uploads, `folder${f}`, `part-${i}.gcode`), FILE);
  }
  const t0 = performance.now();
  const g = await startGantryProcess(process.execPath, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  const pid = g.child.pid!;
  try {
    const get = async (path: string): Promise<{ ms: number; bytes: number }> => {
      const s = performance.now();
      const body = await (await fetch(`${g.url}${path}`, { headers: { 'X-Api-Key': g.apiKey } })).arrayBuffer();
      return { ms: performance.now() - s, bytes: body.byteLength };
    };
    await get('/api/version');
    const startMs = performance.now() - t0;
    const first = await get('/api/files?recursive=true');
    const during: number[] = [];
    for (let i = 0; i < 3; i++) during.push((await get('/api/files?recursive=true')).ms);
    let analysed = 0;
    for (const deadline = performance.now() + 900_000; (analysed = await analysedOnDisk(uploads)) < TOTAL && performance.now() < deadline;) await sleep(500);
    const backlogS = (performance.now() - t0) / 1000;
    const cpuAfterBacklog = await cpuS(pid);
    const recursive: number[] = [];
    const top: number[] = [];
    const polled: number[] = [];
    let bytes = 0;
    for (let i = 0; i < 5; i++) {
      // force: a walk of the disk each time, whatever the listing's reuse time.
      const r = await get('/api/files?recursive=true&force=true');
      recursive.push(r.ms);
      bytes = r.bytes;
      top.push((await get('/api/files?force=true')).ms);
    }
    // A client polling once a second (a large library's listing is reused for four times its walk).
    for (let i = 0; i < 8; i++) {
      polled.push((await get('/api/files?recursive=true')).ms);
      await sleep(1000);
    }
    const rss = await rssMb(pid);
    await sleep(12_000);
    const rssIdle = await rssMb(pid);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
    const ms = (x: number) => `${Math.round(x)} ms`;
    console.log(`${TOTAL} files in ${FOLDERS} folders (${FILE.length} bytes each), copied in before start, node ${process.version}`);
    console.log(`start to first answer                                   ${ms(startMs)}`);
    console.log(`first recursive listing (hashes every file)             ${ms(first.ms)} (${(first.bytes / 1e6).toFixed(1)} MB)`);
    console.log(`recursive listings while the backlog is analysed        ${during.map(ms).join(', ')}`);
    console.log(`every analysis on disk, from start                      ${backlogS.toFixed(1)} s${analysed < TOTAL ? ` (only ${analysed} after 900 s)` : ''}; server CPU ${cpuAfterBacklog.toFixed(1)} s`);
    console.log(`recursive listing afterwards (force: walked), median of 5 ${ms(median(recursive))} (${(bytes / 1e6).toFixed(1)} MB)`);
    console.log(`top-level listing (force; folder sizes need every file), median ${ms(median(top))}`);
    console.log(`recursive listing polled once a second, 8 polls         ${polled.map(ms).join(', ')}`);
    console.log(`RSS after the listings / 12 s later                     ${rss.toFixed(1)} / ${rssIdle.toFixed(1)} MB`);
  } finally {
    await g.stop();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
