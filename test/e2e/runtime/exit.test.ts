// A stopped server ends by its event loop running dry, not by process.exit (whose teardown can hang on Node's compile threads), and a process still held open ends anyway.
import { test, before, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { request } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import WebSocket from 'ws';
import { ROOT, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';

before(ensureBuilt);

// node --trace-exit warns, with a stack, whenever process.exit ends the process.
const EXIT_CALLED = /Exited the environment with code/;

test('SIGTERM while printing with a push client connected ends the launcher-started server with 0, without process.exit', async (t) => {
  const dir = await tempDir(t, 'gantry-exit-');
  const g = await startGantryProcess(process.execPath, ['--trace-exit', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.child.kill('SIGKILL'));
  const headers = { 'X-Api-Key': g.apiKey };
  const json = { ...headers, 'Content-Type': 'application/json' };
  assert.equal((await fetch(`${g.url}/api/connection`, { method: 'POST', headers: json,
    body: JSON.stringify({ command: 'connect', port: 'VIRTUAL', baudrate: 115200, save: false }) })).status, 204);
  await waitForState(g.url, headers, 'Operational');
  const form = new FormData();
  form.append('file', new Blob([Array.from({ length: 20_000 }, (_, i) => `G1 X${i % 100} Y${i % 50} F3000`).join('\n')]), 'long.gcode');
  form.append('print', 'true');
  assert.equal((await fetch(`${g.url}/api/files/local`, { method: 'POST', headers, body: form })).status, 201);
  await waitForState(g.url, headers, 'Printing');
  const ws = new WebSocket(`${g.url.replace('http', 'ws')}/sockjs/websocket`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  ws.on('error', () => {}); // the server going away resets it

  assert.equal(await g.stop(), 0, `stderr: ${g.stderr()}`);
  assert.doesNotMatch(g.stderr(), EXIT_CALLED, 'ended by process.exit');
  assert.doesNotMatch(g.stderr(), /still running/);
  assert.match(g.stdout(), /Gantry stopped/);
});

test('a server whose MQTT broker refuses every connection stops at once, with no timer of a failed attempt holding it', async (t) => {
  const dir = await tempDir(t, 'gantry-exit-mqtt-');
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  await writeFile(join(dir, 'config.yaml'), `plugins:\n  mqtt:\n    broker:\n      url: 127.0.0.1\n      port: ${port}\n`);
  const g = await startGantryProcess(process.execPath, ['--trace-exit', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.child.kill('SIGKILL'));
  await waitFor('the first failed MQTT connection in the log', () => /MQTT: cannot connect/.test(g.stdout()), 20_000);
  assert.equal(await g.stop(), 0, `stderr: ${g.stderr()}`);
  assert.doesNotMatch(g.stderr(), /still running/);
  assert.doesNotMatch(g.stderr(), EXIT_CALLED);
});

test('a server whose MQTT broker takes the connection and never answers stops at once', async (t) => {
  const dir = await tempDir(t, 'gantry-exit-mqtt-');
  const sockets: Socket[] = [];
  let connected: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => { connected = resolve; });
  const silent = createServer((socket) => { sockets.push(socket); connected(); });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => { for (const sk of sockets) sk.destroy(); silent.close(); });
  await writeFile(join(dir, 'config.yaml'), `plugins:\n  mqtt:\n    broker:\n      url: 127.0.0.1\n      port: ${(silent.address() as AddressInfo).port}\n`);
  const g = await startGantryProcess(process.execPath, ['--trace-exit', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.child.kill('SIGKILL'));
  await reached;
  assert.equal(await g.stop(), 0, `stderr: ${g.stderr()}`);
  assert.doesNotMatch(g.stderr(), /still running/);
  assert.doesNotMatch(g.stderr(), EXIT_CALLED);
});

test('a SockJS client on xhr-streaming does not keep the stopped server alive (its session is not kept for its return)', async (t) => {
  const dir = await tempDir(t, 'gantry-exit-sockjs-');
  const g = await startGantryProcess(process.execPath, ['--trace-exit', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.child.kill('SIGKILL'));
  const streaming = request(`${g.url}/sockjs/000/exitsess/xhr_streaming`, { method: 'POST' });
  const opened = new Promise<void>((resolve, reject) => {
    streaming.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d.toString(); if (/^o$/m.test(text)) resolve(); });
      res.on('error', () => undefined);
    });
    streaming.on('error', reject);
  });
  streaming.end();
  await opened;
  streaming.on('error', () => undefined); // the server going away resets it
  assert.equal(await g.stop(), 0, `stderr: ${g.stderr()}`);
  assert.doesNotMatch(g.stderr(), /still running/);
  assert.doesNotMatch(g.stderr(), EXIT_CALLED);
});

function waitForState(url: string, headers: Record<string, string>, wanted: string): Promise<true> {
  return waitFor(`the job state ${wanted}`, async () =>
    ((await (await fetch(`${url}/api/job`, { headers })).json()) as { state: string }).state === wanted, 30_000);
}

async function runEnding(t: TestContext, body: string): Promise<{ code: number | null; stderr: string; ms: number }> {
  const dir = await tempDir(t, 'gantry-end-');
  const script = join(dir, 'end.ts');
  await writeFile(script, `import { endProcessWhenIdle } from ${JSON.stringify(join(ROOT, 'src/core/process-end.ts'))};\n${body}\n`);
  const child = spawn(process.execPath, ['--trace-exit', '--import', 'tsx', script], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const started = Date.now();
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { code, stderr, ms: Date.now() - started };
}

test('a process holding nothing ends with the code given, without process.exit and before the grace', async (t) => {
  const r = await runEnding(t, `setTimeout(() => endProcessWhenIdle(4, { graceMs: 20_000 }), 10);`);
  assert.equal(r.code, 4, r.stderr);
  assert.doesNotMatch(r.stderr, EXIT_CALLED);
  assert.doesNotMatch(r.stderr, /still running/);
  assert.ok(r.ms < 15_000, `ended after ${r.ms} ms`);
});

test('a process something still holds open ends after the grace with the code given, naming what held it', async (t) => {
  const r = await runEnding(t, `import { createServer } from 'node:net';
createServer().listen(0, '127.0.0.1', () => endProcessWhenIdle(3, { graceMs: 300 }));`);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /still running 300 ms after stopping \(held by: [^)]*TCPServerWrap/);
  assert.match(r.stderr, EXIT_CALLED);
});
