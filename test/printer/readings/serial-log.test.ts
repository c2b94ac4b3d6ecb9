// The terminal and logs/serial.log: prefixes, batching for the push channel, the file when serial.log is on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SerialLog } from '../../../src/printer/readings/serial-log.ts';
import { waitForFile } from '../../helpers/wait.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { HOUR_MS, jumpClock } from '../../helpers/clock-jump.ts';

test('terminal lines, batched delivery of the newest lines, serial.log file', async (t) => {
  const dir = await tempDir(t, 'gantry-serial-log-');
  // The 10 ms batch timer runs on mocked time: a batch goes out exactly when its time is up.
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const batches: string[][] = [];
  const log = new SerialLog(5, (lines) => batches.push(lines), 10);
  log.setFileLogging(true, dir);
  log.sent('N1 G28*17');
  log.received('ok');
  log.info('Changing state');
  t.mock.timers.tick(9);
  assert.deepEqual(batches, [], 'not before the batch time');
  t.mock.timers.tick(1);
  assert.deepEqual(batches, [['Send: N1 G28*17', 'Recv: ok', 'Changing state']]);
  for (let i = 0; i < 8; i++) log.received(`line ${i}`);
  t.mock.timers.tick(10);
  assert.equal(batches.length, 2);
  assert.deepEqual(batches[1], ['Recv: line 3', 'Recv: line 4', 'Recv: line 5', 'Recv: line 6', 'Recv: line 7']);
  assert.deepEqual(log.lines(), batches[1]);
  log.close();
  t.mock.timers.reset();
  // The file is written by a stream that close() ends: read it once it holds the last line.
  const file = await waitForFile(join(dir, 'serial.log'), (text) => text.includes('Recv: line 7\n'));
  assert.match(file, / - Send: N1 G28\*17\n/);
  assert.match(file, / - Recv: line 0\n/);
  assert.equal(file.trim().split('\n').length, 11);
});

test('a serial.log that cannot be written is reported, its lines dropped, and opened again 10 s later, whatever the wall clock does', async (t) => {
  const dir = await tempDir(t, 'gantry-serial-log-');
  // A folder where the file goes: opening it fails as a full or broken disk would.
  await mkdir(join(dir, 'serial.log'));
  let monotonic = 1_000;
  const failures: Error[] = [];
  let failed: () => void = () => undefined;
  const log = new SerialLog(10, () => undefined, 5, (err) => { failures.push(err); failed(); }, () => monotonic);
  t.after(() => log.close());
  await new Promise<void>((resolve) => { failed = resolve; log.setFileLogging(true, dir); });
  assert.equal((failures[0] as NodeJS.ErrnoException).code, 'EISDIR');
  await rmdir(join(dir, 'serial.log'));
  log.sent('N1 G28*17');
  monotonic += 9_999;
  log.sent('N2 G28*18');
  monotonic += 1;
  // NTP set the wall clock back an hour meanwhile: before, the file stayed shut until it caught up.
  jumpClock(t, -HOUR_MS);
  log.sent('N3 M105*39');
  const text = await waitForFile(join(dir, 'serial.log'), (s) => s.includes('N3'));
  assert.doesNotMatch(text, /N1|N2/, 'the lines of the 10 s are dropped');
  assert.match(text, / - Send: N3 M105\*39\n/);
  assert.equal(failures.length, 1);
});
