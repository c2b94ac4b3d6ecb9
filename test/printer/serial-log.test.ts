// The terminal and logs/serial.log: prefixes, batching for the push channel, the file when serial.log is on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialLog } from '../../src/printer/serial-log.ts';

test('terminal lines, batched delivery of the newest lines, serial.log file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-serial-log-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const batches: string[][] = [];
  const log = new SerialLog(5, (lines) => batches.push(lines), 10);
  log.setFileLogging(true, dir);
  log.sent('N1 G28*17');
  log.received('ok');
  log.info('Changing state');
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(batches, [['Send: N1 G28*17', 'Recv: ok', 'Changing state']]);
  for (let i = 0; i < 8; i++) log.received(`line ${i}`);
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(batches[1], ['Recv: line 3', 'Recv: line 4', 'Recv: line 5', 'Recv: line 6', 'Recv: line 7']);
  assert.deepEqual(log.lines(), batches[1]);
  log.close();
  await new Promise((r) => setTimeout(r, 50));
  const file = await readFile(join(dir, 'serial.log'), 'utf8');
  assert.match(file, / - Send: N1 G28\*17\n/);
  assert.match(file, / - Recv: line 0\n/);
  assert.equal(file.trim().split('\n').length, 11);
});
