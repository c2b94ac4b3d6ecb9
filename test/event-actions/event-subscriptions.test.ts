// Event subscriptions: real shell commands with placeholders, list semantics, timeouts, shell:false, gcode-type
// subscriptions on the virtual printer, bad entries and the master switch; plus the placeholder formatter's rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtemp, readFile, rm, access, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { waitFor as waitUntil, waitForFile } from '../helpers/wait.ts';
import { splitArgs } from '../../src/event-actions/event-subscriptions.ts';
import { formatCommand, pyRepr, pyStr, UnknownPlaceholderError } from '../../src/event-actions/placeholders.ts';
import { sleep } from '../push/push-clients.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const exists = (p: string): Promise<boolean> => access(p).then(() => true, () => false);

const waitFor = (p: string): Promise<string> => waitForFile(p, (text) => text.endsWith('\n'));

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

test('placeholder fields are read step by step as the expressions before read them, and long ones in linear time (property)', () => {
  // The reading the formatter had, as the oracle: a head, then `.name` or `[key]` steps.
  const oldResolve = (field: string, values: Record<string, unknown>): unknown => {
    const m = /^([^.[]*)(.*)$/.exec(field);
    const head = m ? m[1] : field;
    if (!Object.hasOwn(values, head)) throw new UnknownPlaceholderError(field);
    let cur: unknown = values[head];
    let rest = m ? m[2] : '';
    while (rest) {
      const step = /^(?:\.([^.[]+)|\[([^\]]*)\])(.*)$/.exec(rest);
      if (!step) throw new UnknownPlaceholderError(field);
      const key = step[1] ?? step[2];
      if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) throw new UnknownPlaceholderError(field);
      cur = (cur as Record<string, unknown>)[key];
      rest = step[3];
    }
    return cur;
  };
  const values = { a: { b: { a: 1, '': 2, 'b.a': 3, '[': 4 }, a: 'x' }, b: ['y', 'z'] };
  const read = (f: () => unknown): unknown => { try { return f(); } catch (err) { return err instanceof UnknownPlaceholderError ? 'unknown' : err; } };
  // Found by the property below (seed -606201082): after `]` only `.` or `[` may follow; `a]` was read as the key ''.
  assert.equal(read(() => formatCommand('{a[b]a]}', values)), 'unknown');
  fc.assert(fc.property(fc.string({ maxLength: 12, unit: fc.constantFrom(...'ab01.[]') }), (field) => {
    fc.pre(field !== '' && !/[{}:!]/.test(field));
    assert.deepEqual(read(() => formatCommand(`{${field}}`, values)), read(() => pyStr(oldResolve(field, values))));
  }), { numRuns: 5000 });
  const t0 = performance.now();
  assert.throws(() => formatCommand(`{a.${'b'.repeat(50_000)}[}`, values), UnknownPlaceholderError);
  assert.throws(() => formatCommand(`{a${'.a'.repeat(20_000)}}`, values), UnknownPlaceholderError);
  // A line break after a step, which `(.*)$` cannot pass: the head's expression retried every split of the name.
  assert.throws(() => formatCommand(`{${'a'.repeat(50_000)}.\n}`, values), UnknownPlaceholderError);
  const ms = performance.now() - t0;
  assert.ok(ms < 1500, `${ms.toFixed(0)} ms`);
});

test('system subscriptions run real shell commands with placeholders, in order, stopping at a failure', async (t) => {
  const dir = await tempDir(t, 'gantry-evsub-');
  const server = await startTestServer(t, {
    settings: {
      events: {
        subscriptions: [
          { event: 'PrinterProfileModified', type: 'system',
            command: `printf '%s|%s|%s|%s|%s|{{x}}\\n' "{__eventname}" "{identifier}" '{__json}' "{__filename}" "{__currentZ}" > ${dir}/out.txt` },
          { event: 'PrinterProfileModified', type: 'system', command: `touch ${dir}/never-{unknown}` },
          { event: 'PrinterProfileModified', type: 'system', shell: false, command: 'echo output-of-{identifier}' },
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
  // The log warns about the subscriptions relying on the deprecated shell default, and records command output.
  const logged = async (): Promise<Array<Record<string, unknown>>> => (await readFile(join(server.paths.logs, 'gantry.log'), 'utf8').catch(() => ''))
    .split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  const logEnd = Date.now() + 5000;
  while (!(await logged()).some((l) => l.output === 'output-of-my_profile') && Date.now() < logEnd) await sleep(50);
  const lines = await logged();
  assert.ok(lines.some((l) => l.output === 'output-of-my_profile' && l.msg === 'event command finished'), 'command output logged');
  const deprecations = lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('deprecated'));
  assert.deepEqual(deprecations.map((l) => l.index), [0, 1], 'one warning per system subscription without "shell"');

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
  const dir = await tempDir(t, 'gantry-evsub-');
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

test('gcode subscriptions send their formatted lines to the connected printer, and nothing while offline', async (t) => {
  const server = await startTestServer(t, {
    settings: { events: { subscriptions: [
      { event: 'Connected', type: 'gcode', command: ['M117 hello {port}', 'M118 E1 {__eventname} z={__currentZ}'] },
      { event: 'PrinterProfileModified', type: 'gcode', command: 'M117 profile {identifier}\nM118 E1 second line\rM118 E1 third line\r\nM118 E1 fourth line' },
    ] } },
  });
  const sent: string[] = [];
  const off = server.printer.subscribe({ log: (lines) => { for (const l of lines) if (l.startsWith('Send:')) sent.push(l); } });
  t.after(off);
  const waitSent = async (text: string): Promise<void> => {
    const end = Date.now() + 20_000;
    while (!sent.some((l) => l.includes(text))) {
      if (Date.now() > end) throw new Error(`never sent: ${text} (sent: ${sent.slice(-5).join(' | ')})`);
      await sleep(50);
    }
  };
  server.events.emit('PrinterProfileModified', { identifier: 'while-offline' });
  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  await waitSent('M117 hello VIRTUAL');
  await waitSent('M118 E1 Connected z=');
  server.events.emit('PrinterProfileModified', { identifier: 'p1' });
  await waitSent('M117 profile p1');
  await waitSent('M118 E1 fourth line');
  // Each line of the command on its own, whatever ends it.
  for (const n of ['second', 'third', 'fourth']) assert.ok(sent.some((l) => new RegExp(`^Send: (N\\d+ )?M118 E1 ${n} line(\\*\\d+)?$`).test(l)), n);
  assert.ok(!sent.some((l) => l.includes('while-offline')));
});

async function logLines(dir: string): Promise<Array<Record<string, unknown>>> {
  return (await readFile(join(dir, 'gantry.log'), 'utf8').catch(() => ''))
    .split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('a config.yaml with bad subscription entries still starts; the good entry runs and the log names the bad ones', async (t) => {
  const baseDir = await mkdtemp(join(tmpdir(), 'gantry-evsub-base-'));
  const dir = await mkdtemp(join(tmpdir(), 'gantry-evsub-'));
  t.after(async () => { await rm(dir, { recursive: true, force: true }); await rm(baseDir, { recursive: true, force: true }); });
  await writeFile(join(baseDir, 'config.yaml'), [
    'events:',
    '  subscriptions:',
    '    - name: broken-no-type',
    '      event: Startup',
    `      command: touch ${dir}/broken`,
    '    - event: Startup',
    '      type: telepathy',
    `      command: touch ${dir}/telepathy`,
    '    - just a string',
    '    - event: Startup',
    '      type: system',
    '      shell: true',
    `      command: touch ${dir}/good-{__eventname}`,
    '',
  ].join('\n'));
  const server = await startTestServer(t, { baseDir });
  const end = Date.now() + 10_000;
  while (!(await exists(join(dir, 'good-Startup'))) && Date.now() < end) await sleep(50);
  assert.equal(await exists(join(dir, 'good-Startup')), true, 'the good subscription ran');
  assert.equal(server.config.current.events.subscriptions.length, 4);
  const ignored = (await logLines(server.paths.logs)).filter((l) => l.level === 40 && typeof l.msg === 'string' && l.msg.includes('ignored'));
  assert.deepEqual(ignored.map((l) => l.index), [0, 1, 2]);
  assert.match(String(ignored[0].msg), /broken-no-type/);
  assert.match(String(ignored[0].msg), /type/);
  assert.match(String(ignored[1].msg), /telepathy/);
  assert.match(String(ignored[2].msg), /just a string.*not a mapping/);
  assert.equal(await exists(join(dir, 'broken')), false);
  assert.equal(await exists(join(dir, 'telepathy')), false);
});

test('events.enabled: false runs no subscription', async (t) => {
  const dir = await tempDir(t, 'gantry-evsub-');
  const server = await startTestServer(t, { settings: { events: { enabled: false, subscriptions: [
    { event: 'PrinterProfileModified', type: 'system', shell: true, command: `echo {identifier} >> ${dir}/off` },
  ] } } });
  server.events.emit('PrinterProfileModified', { identifier: 'x' });
  // Turned on while running, the same subscription runs: its line is the only one, so the emit while off ran nothing
  // (had it run, its command would have started before the config save and this one).
  await server.config.patch({ events: { enabled: true } });
  server.events.emit('PrinterProfileModified', { identifier: 'y' });
  assert.equal(await waitFor(join(dir, 'off')), 'y\n');
});

test('commands run for Shutdown get a bounded grace period at stop; others are killed at once', async (t) => {
  const dir = await tempDir(t, 'gantry-evsub-');
  const server = await startTestServer(t, { settings: { events: { subscriptions: [
    { event: 'Shutdown', type: 'system', shell: true, command: `sleep 1; echo finished > ${dir}/shutdown-done` },
    { event: 'Shutdown', type: 'system', shell: true, command: `echo $$ > ${dir}/stuck-pid; sleep 60; touch ${dir}/stuck-late` },
    { event: 'PrinterProfileModified', type: 'system', shell: true, command: `echo $$ > ${dir}/other-pid; sleep 60` },
  ] } } });
  server.events.emit('PrinterProfileModified', { identifier: 'x' });
  const otherPid = Number((await waitFor(join(dir, 'other-pid'))).trim());
  const started = Date.now();
  await server.stop();
  const took = Date.now() - started;
  assert.equal(await readFile(join(dir, 'shutdown-done'), 'utf8'), 'finished\n', 'the Shutdown command was allowed to finish');
  // The stuck one was given the grace period (5 s), then killed; stop() did not wait for it beyond that.
  assert.ok(took >= 4500 && took < 9000, `stop took ${took} ms`);
  const alive = (pid: number): boolean => { try { process.kill(pid, 0); return true; } catch { return false; } };
  const stuckPid = Number((await readFile(join(dir, 'stuck-pid'), 'utf8')).trim());
  // Killed, they are gone once reaped.
  await waitUntil('the stuck command to be gone', () => !alive(stuckPid), 2000);
  await waitUntil('the other command to be gone', () => !alive(otherPid), 2000);
  assert.equal(await exists(join(dir, 'stuck-late')), false);
});

test('events without a payload give {__data} None and {__json} {}; others their repr and JSON', async (t) => {
  const dir = await tempDir(t, 'gantry-evsub-');
  const server = await startTestServer(t, { settings: { events: { subscriptions: [
    { event: ['Home', 'ToolChange'], type: 'system', shell: true, command: `printf '%s|%s\\n' "{__data}" '{__json}' > ${dir}/{__eventname}` },
  ] } } });
  // As the printer link emits them.
  server.events.emit('Home', {});
  server.events.emit('ToolChange', { old: 0, new: 1 });
  assert.equal(await waitFor(join(dir, 'Home')), 'None|{}\n');
  assert.equal(await waitFor(join(dir, 'ToolChange')), `{'old': 0, 'new': 1}|{"old":0,"new":1}\n`);
});
