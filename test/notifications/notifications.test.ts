// The notifier end to end (src/notifications/): a real print on the virtual printer notifies a JSON webhook, ntfy and
// Debian's apprise (json://) on local receivers, with the camera's snapshot attached, while a target that never
// answers holds up nothing; URLs stay secret from readers and the log; the test message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectedServer } from '../helpers/connected-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { needs } from '../helpers/tools.ts';

interface Received { method: string; url: string; headers: IncomingMessage['headers']; body: Buffer }

/** A local HTTP listener that records every request and answers 200 (or never, when `hang`). */
async function receiver(t: { after(fn: () => unknown): void }, opts: { hang?: boolean } = {}) {
  const got: Received[] = [];
  const waiting: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      for (const w of waiting.splice(0)) w();
      if (!opts.hang) res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => { server.closeAllConnections(); server.close(); });
  return {
    port: (server.address() as AddressInfo).port,
    got,
    async until(what: string, ok: (r: Received[]) => boolean, ms = 30_000): Promise<void> {
      const end = Date.now() + ms;
      while (!ok(got)) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}; got ${got.map((g) => `${g.method} ${g.url}`).join(', ')}`);
        await new Promise<void>((r) => { waiting.push(r); setTimeout(r, 500); });
      }
    },
  };
}

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('a tiny picture of the bed'), Buffer.from([0xff, 0xd9])]);

async function camera(t: { after(fn: () => unknown): void }): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(JPEG));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/snapshot`;
}

function printFile(): FormData {
  const lines = ['G28', 'G90', 'M83'];
  for (let layer = 1; layer <= 8; layer++) lines.push(`G1 Z${(layer * 0.2).toFixed(1)} F600`, 'G1 X60 Y10 E1 F6000', 'G1 X10 Y10 E1 F6000');
  const form = new FormData();
  form.append('file', new Blob([lines.join('\n') + '\n']), 'cube.gcode');
  form.append('print', 'true');
  return form;
}

const json = (r: Received) => JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;

test('a print notifies every target in order, with the snapshot, while a dead target waits alone', { skip: needs('apprise') }, async (t) => {
  const hook = await receiver(t);
  const dead = await receiver(t, { hang: true });
  const snapshotUrl = await camera(t);
  const server = await connectedServer(t, {
    appearance: { name: 'Workshop MK4' },
    webcam: { snapshot: snapshotUrl },
    plugins: { notifications: {
      progressStep: 50, timeout: 60, retries: 0,
      targets: [
        { url: `http://127.0.0.1:${dead.port}/hook/SECRET-dead-token`, events: ['PrintStarted', 'PrintDone'] },
        { name: 'webhook', url: `http://127.0.0.1:${hook.port}/hook`, events: ['PrintStarted', 'PrintProgress', 'PrintDone'], snapshot: true },
        { name: 'ntfy', url: `ntfy://127.0.0.1:${hook.port}/gantry`, transport: 'builtin', events: ['PrintDone'], snapshot: true },
        { name: 'apprise', url: `json://127.0.0.1:${hook.port}/apprise`, events: ['PrintDone'], snapshot: true },
      ],
    } },
  });
  assert.equal((await server.api('/api/files/local', { method: 'POST', body: printFile() })).status, 201);

  await hook.until('PrintDone on the webhook, ntfy and apprise', (got) =>
    got.some((g) => g.url === '/hook' && json(g).event === 'PrintDone') && got.some((g) => g.url.startsWith('/gantry')) && got.some((g) => g.url === '/apprise'));
  const hooked = hook.got.filter((g) => g.url === '/hook').map(json);
  assert.deepEqual(hooked.map((h) => h.event), ['PrintStarted', 'PrintProgress', 'PrintDone'], 'the events of the print, in order');
  const done = hooked[2];
  assert.equal(done.title, 'Workshop MK4: print done');
  assert.match(String(done.message), /^cube\.gcode finished after \d+s\.$/);
  assert.equal(done.printer, 'Workshop MK4');
  assert.equal((done.payload as { name: string }).name, 'cube.gcode');
  assert.equal((hooked[1].payload as { progress: number }).progress, 50);
  assert.deepEqual(done.snapshot, { mimetype: 'image/jpeg', base64: JPEG.toString('base64') });

  // ntfy without Apprise: the picture PUT as the attachment, the text in the headers.
  const ntfy = hook.got.find((g) => g.url.startsWith('/gantry')) as Received;
  assert.equal(ntfy.method, 'PUT');
  assert.deepEqual(ntfy.body, JPEG);
  assert.equal(ntfy.headers.title, 'Workshop MK4: print done');
  assert.equal(ntfy.headers.filename, 'snapshot.jpg');

  // Debian's apprise, json:// — its own payload shape, with the snapshot attached as base64.
  const apprise = json(hook.got.find((g) => g.url === '/apprise') as Received);
  assert.equal(apprise.title, 'Workshop MK4: print done');
  assert.equal(apprise.type, 'success');
  const attachments = apprise.attachments as { base64: string }[];
  assert.equal(attachments.length, 1);
  assert.deepEqual(Buffer.from(attachments[0].base64, 'base64'), JPEG);

  // The dead target got its first request and is still waiting on it: nothing else waited for it.
  assert.equal(dead.got.length, 1);
  const status = await (await server.api('/api/plugin/notifications')).json() as { targets: { url: string; waiting: number }[]; recent: { event: string; ok: boolean }[] };
  assert.equal(status.targets[0].url, `http://127.0.0.1:${dead.port}/…`, 'the URL is masked');
  assert.equal(status.targets[0].waiting, 1, 'PrintDone waits behind the hanging PrintStarted');
  assert.ok(status.recent.some((r) => r.event === 'PrintDone' && r.ok));
  // The print itself ended normally.
  await waitFor('Operational after the print', async () => ((await (await server.api('/api/job')).json()) as { state: string }).state === 'Operational');
});

test('target URLs are hidden from readers without SETTINGS and never logged; the test message reaches the target', async (t) => {
  const hook = await receiver(t);
  const refused = createServer((_req, res) => res.writeHead(403).end());
  await new Promise<void>((r) => refused.listen(0, '127.0.0.1', r));
  t.after(() => refused.close());
  const refusedUrl = `http://127.0.0.1:${(refused.address() as AddressInfo).port}/api/webhooks/SECRET-token-123`;
  const server = await connectedServer(t, { plugins: { notifications: { retries: 1, retryDelay: 0.01, targets: [
    { name: 'mine', url: `http://127.0.0.1:${hook.port}/hook/SECRET-token-456` },
    { name: 'refusing', url: refusedUrl },
  ] } } });

  const results = await (await server.api('/api/plugin/notifications', { method: 'POST', json: { command: 'test' } })).json() as { results: { ok: boolean; error?: string }[] };
  assert.equal(results.results[0].ok, true);
  assert.deepEqual(results.results[1], { target: 1, name: 'refusing', ok: false, error: 'the webhook answered 403' });
  assert.equal(json(hook.got[0]).event, 'Test');
  assert.equal((await server.api('/api/plugin/notifications', { method: 'POST', json: { command: 'test', target: 9 } })).status, 404);

  // A print event the refusing target fails twice on is logged with the masked URL only.
  assert.equal((await server.api('/api/files/local', { method: 'POST', body: printFile() })).status, 201);
  await waitFor('the failed delivery in the log', async () => (await readFile(join(server.paths.logs, 'gantry.log'), 'utf8')).includes('notification not delivered'), { timeoutMs: 30_000 });
  const log = await readFile(join(server.paths.logs, 'gantry.log'), 'utf8');
  assert.ok(!log.includes('SECRET-token'), 'no target URL in the log');

  // A reader without SETTINGS sees only scheme and host.
  const created = await server.api('/api/access/users', { method: 'POST', json: { name: 'viewer', password: 'correct horse', active: true, groups: ['readonly'] } });
  assert.equal(created.status, 200);
  const key = ((await (await server.api('/api/access/users/viewer/apikey', { method: 'POST' })).json()) as { apikey: string }).apikey;
  const seen = await (await server.api('/api/settings', { key })).json() as { plugins: { notifications?: { targets: { url: string }[] } } };
  const admin = await (await server.api('/api/settings')).json() as { plugins: { notifications: { targets: { url: string }[] } } };
  assert.equal(admin.plugins.notifications.targets[1].url, refusedUrl, 'an admin sees the URL to edit it');
  assert.ok(!JSON.stringify(seen).includes('SECRET-token'), 'a reader never sees a token');
  assert.equal((await server.api('/api/plugin/notifications', { key })).status, 403);
  // The body's types as the schema says: an array is not the command (#58 item 10).
  assert.equal((await server.api('/api/plugin/notifications', { method: 'POST', json: { command: ['test'] } })).status, 400);
});
