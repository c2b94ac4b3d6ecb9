// Event subscriptions: real shell commands with placeholders, list semantics, timeouts, shell:false, and gcode-type
// subscriptions; plus the placeholder formatter's Python str.format rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { EventSubscriptions, splitArgs } from '../../src/events/event-subscriptions.ts';
import { formatCommand, pyRepr, UnknownPlaceholderError } from '../../src/events/placeholders.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { sleep } from './push-clients.ts';

const exists = (p: string): Promise<boolean> => access(p).then(() => true, () => false);

async function waitFor(p: string, timeoutMs = 10_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await exists(p)) {
      const text = await readFile(p, 'utf8');
      if (text.endsWith('\n')) return text;
    }
    await sleep(50);
  }
  throw new Error(`${p} did not appear`);
}

test('placeholders follow str.format: nesting, escaped braces, repr, unknown names', () => {
  const v = { name: 'a b.gcode', position: { x: 1.5, y: null }, list: [1, 'x'], flag: true, time: 12.34 };
  assert.equal(formatCommand('{{literal}} {name} {position[x]} {position.y}', v), '{literal} a b.gcode 1.5 None');
  assert.equal(formatCommand('{list} {flag} {time:.1f} {name!r}', v), "[1, 'x'] True 12.3 'a b.gcode'");
  assert.throws(() => formatCommand('echo {nope}', v), UnknownPlaceholderError);
  assert.throws(() => formatCommand('echo {position[z]}', v), UnknownPlaceholderError);
  assert.throws(() => formatCommand('echo {', v));
  assert.equal(pyRepr({ a: [true, null, "it's"] }), "{'a': [True, None, 'it\\'s']}");
  assert.deepEqual(splitArgs(`touch "/tmp/a b" 'c d' e`), ['touch', '/tmp/a b', 'c d', 'e']);
});

test('system subscriptions run real shell commands with placeholders, in order, stopping at a failure', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-evsub-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const server = await startTestServer(t, {
    settings: {
      events: {
        subscriptions: [
          { event: 'PrinterProfileModified', type: 'system',
            command: `printf '%s|%s|%s|%s|%s|{{x}}\\n' "{__eventname}" "{identifier}" '{__json}' "{__filename}" "{__currentZ}" > ${dir}/out.txt` },
          { event: 'PrinterProfileModified', type: 'system', command: `touch ${dir}/never-{unknown}` },
          { event: ['PrinterProfileAdded'], type: 'system', shell: true, command: [`touch ${dir}/a; exit 3`, `touch ${dir}/b`] },
          { event: 'PrinterProfileAdded', type: 'system', shell: true, command: `sleep 1; echo done > ${dir}/marker` },
          { event: 'PrinterProfileDeleted', type: 'system', shell: false, command: `touch "${dir}/with space {identifier}"` },
          { event: 'PrinterProfileDeleted', type: 'system', enabled: false, command: `touch ${dir}/disabled` },
        ],
      },
    },
  });
  server.events.emit('PrinterProfileModified', { identifier: 'my_profile' });
  const out = await waitFor(join(dir, 'out.txt'));
  assert.equal(out, 'PrinterProfileModified|my_profile|{"identifier":"my_profile"}|NO FILE|-1|{x}\n');

  server.events.emit('PrinterProfileAdded', { identifier: 'p2' });
  await waitFor(join(dir, 'marker'));
  assert.equal(await exists(join(dir, 'a')), true);
  assert.equal(await exists(join(dir, 'b')), false, 'a failing command stops the rest of its list');
  assert.equal(await exists(join(dir, 'never-')), false);

  server.events.emit('PrinterProfileDeleted', { identifier: 'p3' });
  const end = Date.now() + 5000;
  while (!(await exists(join(dir, 'with space p3'))) && Date.now() < end) await sleep(50);
  assert.equal(await exists(join(dir, 'with space p3')), true);
  assert.equal(await exists(join(dir, 'disabled')), false);
});

test('a system command that runs too long is killed; the event loop is never blocked', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-evsub-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const server = await startTestServer(t, {
    settings: { events: { commandTimeout: 1, subscriptions: [
      { event: 'PrinterProfileModified', type: 'system', shell: true, command: `echo $$ > ${dir}/pid; sleep 30; touch ${dir}/late` },
    ] } },
  });
  server.events.emit('PrinterProfileModified', { identifier: 'x' });
  const pid = Number((await waitFor(join(dir, 'pid'))).trim());
  // The loop keeps serving requests while the command runs.
  assert.equal((await server.api('/api/version')).status, 200);
  const end = Date.now() + 10_000;
  let alive = true;
  while (alive && Date.now() < end) {
    try { process.kill(pid, 0); await sleep(100); } catch { alive = false; }
  }
  assert.equal(alive, false, 'the timed-out command was killed');
  assert.equal(await exists(join(dir, 'late')), false);
});

test('gcode subscriptions send their formatted lines to the printer, and nothing when it is offline', async (t) => {
  const server = await startTestServer(t, {
    settings: { events: { subscriptions: [
      { event: 'PrintStarted', type: 'gcode', command: ['M117 Printing {name}', 'M300 S{size}'] },
      { event: 'PrintDone', type: 'gcode', command: 'M117 Done {name}\nM18' },
    ] } },
  });
  const sent: string[][] = [];
  let operational = true;
  const subs = new EventSubscriptions({
    config: server.config, events: server.events, logger: silentLogger,
    gcode: { isOperational: () => operational, commands: (lines) => { sent.push(lines); } },
  });
  await subs.start();
  t.after(() => subs.stop());
  server.events.emit('PrintStarted', { name: 'cube.gcode', path: 'cube.gcode', origin: 'local', size: 1234 });
  server.events.emit('PrintDone', { name: 'cube.gcode', path: 'cube.gcode', origin: 'local', size: 1234, time: 10 });
  assert.deepEqual(sent, [['M117 Printing cube.gcode', 'M300 S1234'], ['M117 Done cube.gcode', 'M18']]);
  operational = false;
  server.events.emit('PrintDone', { name: 'cube.gcode', path: 'cube.gcode', origin: 'local', size: 1234, time: 10 });
  assert.equal(sent.length, 2);
});
