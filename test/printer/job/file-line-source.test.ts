// Reading a job's file into lines: LF, CR LF and lone CR breaks at any chunk boundary, over-long lines, and whole prints of such files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { fileLineSource } from '../../../src/printer/job/file-line-source.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { connectedServer, waitFor } from '../helpers.ts';
import { uploadFile, job, recorder, type Json } from './helpers.ts';
import { journalOnDisk } from '../../recovery/helpers.ts';

/** Universal newlines written out plainly: the lines (over `max` bytes: '') and the offset after each one's break. */
function reference(bytes: Buffer, max: number): { lines: string[]; ends: number[] } {
  const lines: string[] = [];
  const ends: number[] = [];
  let i = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let lineStart = i;
  const push = (end: number, next: number) => {
    lines.push(end - lineStart > max ? '' : bytes.toString('utf8', lineStart, end));
    ends.push(next);
    lineStart = next;
  };
  for (; i < bytes.length; i++) {
    if (bytes[i] === 10) push(i, i + 1);
    else if (bytes[i] === 13) {
      const next = bytes[i + 1] === 10 ? i + 2 : i + 1;
      push(i, next);
      i = next - 1;
    }
  }
  if (lineStart < bytes.length) push(bytes.length, bytes.length);
  return { lines, ends };
}

async function read(path: string, chunkSize: number, max: number): Promise<{ lines: string[]; ends: number[] }> {
  const lines: string[] = [];
  const ends: number[] = [];
  for await (const batch of fileLineSource(path, 0, chunkSize, max)) {
    assert.equal(batch.lines.length, batch.ends.length);
    lines.push(...batch.lines);
    ends.push(...batch.ends);
  }
  return { lines, ends };
}

test('property: any mix of LF, CR LF and lone CR, cut into any chunks, reads as universal newlines do', async (t) => {
  const dir = await tempDir(t, 'gantry-lines-');
  const token = fc.constantFrom('G1 X1', 'M105', ';c', 'é', 'x', '\n', '\r', '\r\n', '\r\r', '\n\r', 'G28 ; long comment here');
  let n = 0;
  await fc.assert(fc.asyncProperty(fc.boolean(), fc.array(token, { maxLength: 40 }), fc.integer({ min: 3, max: 24 }), fc.integer({ min: 1, max: 40 }),
    async (bom, tokens, chunkSize, max) => {
      const bytes = Buffer.from((bom ? '\ufeff' : '') + tokens.join(''), 'utf8');
      const path = join(dir, `f${n++}.gcode`);
      await writeFile(path, bytes);
      assert.deepEqual(await read(path, chunkSize, max), reference(bytes, max));
    }), { numRuns: 400 });
});

test('a 24 MB file without a line break is read at once as one empty line, holding no more than a chunk', async (t) => {
  const dir = await tempDir(t, 'gantry-lines-');
  const path = join(dir, 'junk.gcode');
  await writeFile(path, Buffer.alloc(24 * 1024 * 1024, 'A'));
  const before = process.memoryUsage().arrayBuffers;
  let peak = 0;
  const lines: string[] = [];
  for await (const batch of fileLineSource(path)) {
    lines.push(...batch.lines);
    peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
  }
  assert.deepEqual(lines, ['']);
  assert.ok(peak < 4 * 1024 * 1024, `buffers grew by ${peak} bytes`);
});

const moves = (n: number, br: string) => ['G28', ...Array.from({ length: n }, (_, i) => `G1 X${i + 1} Y${(i % 7) + 1} E${((i + 1) * 0.05).toFixed(2)} F3000`), 'M400', ''].join(br);

test('files with CR or CR LF line breaks print every move as its own line, and are analysed like LF ones', async (t) => {
  // The terminal keeps every line of these prints (20 by default).
  const s = await connectedServer(t, { serial: { terminalLogSize: 1000 } });
  for (const [name, br] of [['cr.gcode', '\r'], ['crlf.gcode', '\r\n'], ['lf.gcode', '\n']] as const) {
    assert.equal((await uploadFile(s, name, moves(30, br), [{ name: 'select', value: 'true' }, { name: 'print', value: 'true' }])).status, 201);
    await waitFor(`${name} printed`, async () => {
      const j = await job(s) as { state: string; progress: { completion: number | null } };
      return j.state === 'Operational' && j.progress.completion === 100 || undefined;
    });
    const sent = s.printer.terminal().filter((l) => /^Send: N\d+ G1 X/.test(l));
    const xs = sent.slice(-30).map((l) => Number(/ X(\d+) /.exec(l)?.[1]));
    assert.deepEqual(xs, Array.from({ length: 30 }, (_, i) => i + 1), `${name}: each move sent once, as a line of its own`);
    assert.ok(sent.slice(-30).every((l) => !l.includes('\r')), name);
  }
  const analysed = async (name: string) => {
    const entry = await waitFor(`${name} analysed`, async () =>
      ((await (await s.api(`/api/files/local/${name}`)).json()) as Json & { gcodeAnalysis?: { estimatedPrintTime?: number; filament?: unknown } }).gcodeAnalysis?.estimatedPrintTime ? await (await s.api(`/api/files/local/${name}`)).json() as Json : undefined);
    return (entry as { gcodeAnalysis: { estimatedPrintTime: number; filament: unknown; dimensions: unknown } }).gcodeAnalysis;
  };
  const lf = await analysed('lf.gcode');
  for (const name of ['cr.gcode', 'crlf.gcode']) {
    const a = await analysed(name);
    assert.deepEqual([a.estimatedPrintTime, a.filament, a.dimensions], [lf.estimatedPrintTime, lf.filament, lf.dimensions], name);
  }
});

test('a file written over in place while it is read stops the read with an error: cut short, or the same size with other bytes', async (t) => {
  const dir = await tempDir(t, 'gantry-lines-');
  for (const [what, overwrite, expect] of [
    ['cut short', (p: string) => writeFile(p, 'G28\n'), /cut short on disk while it was printed \(4 bytes, 4000 when its read began\)/],
    ['same size', (p: string) => writeFile(p, 'G1 Z9\n'.repeat(4000 / 6) + 'M84\n'), /written over on disk/],
  ] as const) {
    const path = join(dir, `${what}.gcode`);
    await writeFile(path, 'G1 X1\n'.repeat(666) + 'M84\n');
    const source = fileLineSource(path, 0, 1024);
    const first = await source.next();
    assert.equal(first.done, false);
    await overwrite(path);
    // The kernel stamps writes to its clock tick: a write within the tick of the open may keep the time.
    await utimes(path, new Date(), new Date(Date.now() + 10_000));
    await assert.rejects(async () => { for (let r = await source.next(); !r.done; r = await source.next()); }, expect, what);
  }
  // Untouched, it reads to its end (each chunk checks the file).
  const path = join(dir, 'untouched.gcode');
  await writeFile(path, 'G1 X1\n'.repeat(2000));
  let n = 0;
  for await (const batch of fileLineSource(path, 0, 1024)) n += batch.lines.length;
  assert.equal(n, 2000);
});

test('a print whose file is written over in place fails with that error instead of ending as done, is not offered for a resume, and leaves the printer cold', async (t) => {
  // Moves of 1 mm at 100 mm/s, at a twentieth of real time: about 2,000 lines a second, so the 48,000 lines take about
  // 24 s and the reads ahead (a batch or two of 64 KB, the link thread's 1,500 lines) are far from the end of the file.
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } } });
  const events = recorder(s);
  const body = `G28\nM104 S200\nM140 S60\n${'G1 X10 F6000\nG1 X11 F6000\n'.repeat(24_000)}M84\n`;
  assert.equal((await uploadFile(s, 'replaced.gcode', body, [{ name: 'select', value: 'true' }, { name: 'print', value: 'true' }])).status, 201);
  await waitFor('printing', async () => ((await job(s)) as Json).state === 'Printing' || undefined);
  // Journalled first (its record is what an offer would come from), as it is a few seconds into any print.
  await waitFor('the print journalled', async () => (await journalOnDisk(s.baseDir))?.status === 'printing' || undefined);
  await writeFile(join(s.baseDir, 'uploads', 'replaced.gcode'), 'G28\nM84\n');
  await utimes(join(s.baseDir, 'uploads', 'replaced.gcode'), new Date(), new Date(Date.now() + 10_000));
  const failed = await waitFor('PrintFailed', async () => events.events.find((e) => e.name === 'PrintFailed'), 20_000);
  assert.match(String(failed.payload.error), /cut short on disk while it was printed/);
  assert.equal(events.names().includes('PrintDone'), false);
  const history = await waitFor('the failure on record', async () => {
    const entry = (await (await s.api('/api/files/local/replaced.gcode')).json()) as Json;
    return entry.prints ? entry.prints as Json : undefined;
  });
  assert.deepEqual([history.success, history.failure], [0, 1]);
  // What was printed is no longer on disk: no resume is offered (it would print the new file's rest at this offset).
  assert.equal((failed.payload.interruption as Json | undefined)?.cause, 'file-changed');
  assert.equal(((await job(s)) as Json).interruption?.cause, 'file-changed');
  assert.deepEqual(await (await s.api('/api/plugin/recovery')).json(), { available: false });
  assert.equal(events.names().includes('PrintRecoveryAvailable'), false);
  // The printer, still connected, is not left hot: the cancel script (heaters, fan and motors off) follows the failure.
  const sent = () => s.printer.terminal().filter((l) => l.startsWith('Send: ')).join('\n');
  await waitFor('the heaters turned off', async () => /M104 T0 S0/.test(sent()) && /M140 S0/.test(sent()) || undefined);
  assert.match(sent(), /M84/);
  assert.match(sent(), /M106 S0/);
  const targets = await waitFor('targets at 0', async () => {
    const t = ((await (await s.api('/api/printer')).json()) as Json).temperature as Record<string, { target: number }>;
    return t.tool0.target === 0 && t.bed.target === 0 ? t : undefined;
  }, 20_000);
  assert.equal(targets.tool0.target, 0);
});
