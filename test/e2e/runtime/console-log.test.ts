// Console log format: readable lines at a terminal (colours) and for systemd's journal (no colours, no time), JSON when piped; the log file stays JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createWriteStream, fstatSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { once } from 'node:events';
import { pino } from 'pino';
import { consoleLogStream } from '../../../src/system/console-log.ts';
import { ROOT, ensureBuilt } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

async function logThrough(file: string, journal: boolean): Promise<string> {
  const fd = openSync(file, 'w');
  const out = createWriteStream(file, { fd });
  const saved = process.env.JOURNAL_STREAM;
  const s = fstatSync(fd);
  if (journal) process.env.JOURNAL_STREAM = `${s.dev}:${s.ino}`;
  else delete process.env.JOURNAL_STREAM;
  try {
    const dest = await consoleLogStream(out as unknown as NodeJS.WriteStream);
    pino({ base: undefined }, dest).child({ svc: 'files' }).info({ path: 'a.gcode' }, 'analysed');
  } finally {
    if (saved === undefined) delete process.env.JOURNAL_STREAM;
    else process.env.JOURNAL_STREAM = saved;
  }
  out.end();
  await once(out, 'close');
  return readFile(file, 'utf8');
}

test('stdout that is a pipe or file gets JSON; systemd journal gets readable lines without colours or time', async (t) => {
  const dir = await tempDir(t, 'gantry-console-');
  const json = await logThrough(join(dir, 'plain.log'), false);
  assert.equal((JSON.parse(json.trim()) as { msg: string }).msg, 'analysed');
  const journal = await logThrough(join(dir, 'journal.log'), true);
  assert.match(journal, /^INFO: analysed\n/);
  assert.match(journal, /svc: "files"/);
  assert.ok(!journal.includes('\u001b['), 'no colour codes');
  assert.doesNotMatch(journal, /^\{/, 'not JSON');
  assert.doesNotMatch(journal, /\[\d\d:\d\d/, 'the journal has its own timestamps');
});

test('gantry serve at a terminal prints readable coloured lines while logs/gantry.log stays JSON', async (t) => {
  await ensureBuilt();
  const dir = await tempDir(t, 'gantry-console-');
  // util-linux `script` gives the server a pseudo-terminal as stdout.
  const cmd = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(ROOT, 'bin/gantry.js'))} serve --port 0 --basedir ${JSON.stringify(dir)}`;
  const child = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, GANTRY_BASEDIR: '' } });
  let out = '';
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/is up at http/.test(out)) resolve();
    });
    void exited.then(() => reject(new Error(`exited before it was up: ${out}`)));
  });
  process.kill(-child.pid!, 'SIGTERM');
  await exited;
  assert.match(out, /INFO.*Gantry listening/);
  assert.ok(out.includes('\u001b[32mINFO'), 'coloured');
  assert.doesNotMatch(out, /\{"level":/, 'no JSON at the terminal');
  const file = (await readFile(join(dir, 'logs', 'gantry.log'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
  assert.ok(file.some((l) => l.msg === 'Gantry listening'), 'the file has the same entry as JSON');
});

test('gantry serve keeps running when its console goes away (stdout a pipe whose reader exited); the log file keeps the lines', async (t) => {
  await ensureBuilt();
  const dir = await tempDir(t, 'gantry-console-');
  const base = join(dir, 'base');
  const child = spawn(process.execPath, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', base], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GANTRY_BASEDIR: '' } });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const up = /is up at (http:\/\/\S+)/.exec(out);
      if (up) resolve(up[1]);
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code}: ${err}`)));
  });
  const apiKey = /global API key:\s+(\S+)/.exec(out)![1];
  // The reader goes (as `gantry serve | head` does once it has its lines): the next console write fails with EPIPE.
  child.stdout.destroy();
  const headers = { 'X-Api-Key': apiKey, 'Content-Type': 'application/json' };
  // A login logs at info, to the console and the file.
  assert.equal((await fetch(`${url}/api/access/users`, { method: 'POST', headers, body: JSON.stringify({ name: 'ann', password: 'correct horse', active: true }) })).status, 200);
  const login = await fetch(`${url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ user: 'ann', pass: 'correct horse' }) });
  assert.equal(login.status, 200);
  assert.equal((await fetch(`${url}/api/version`, { headers })).status, 200, `the server still answers; stderr: ${err}`);
  assert.equal(child.exitCode, null, 'still running');
  assert.match(await readFile(join(base, 'logs/gantry.log'), 'utf8'), /"user":"ann".*"msg":"user logged in"/, 'the log file has the line');
  child.kill('SIGTERM');
  assert.deepEqual(await once(child, 'exit'), [0, null], `an orderly stop; stderr: ${err}`);
});
