// The event bus on its own and in the server: a throwing listener is isolated and reported, owners are removed whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EventBus } from '../../src/core/event-bus.ts';
import { startTestServer } from '../helpers/server.ts';
import { sleep } from '../push/push-clients.ts';

test('a throwing listener is reported and neither stops the others nor the emitter', () => {
  const reported: Array<{ message: string; name: string; owner: string }> = [];
  const bus = new EventBus((err, name, owner) => reported.push({ message: (err as Error).message, name, owner }));
  const seen: string[] = [];
  bus.on('first', 'Home', () => seen.push('first'));
  bus.on('broken', 'Home', () => { throw new Error('listener bug'); });
  bus.onAny('any', (name) => seen.push(`any:${name}`));
  bus.on('last', 'Home', () => seen.push('last'));
  assert.doesNotThrow(() => bus.emit('Home', {}));
  assert.deepEqual(seen, ['first', 'any:Home', 'last']);
  assert.deepEqual(reported, [{ message: 'listener bug', name: 'Home', owner: 'broken' }]);
});

test('removeOwner drops every listener of that owner (named and any) and no other; unsubscribe drops one', () => {
  const bus = new EventBus();
  const seen: string[] = [];
  bus.on('svc', 'Home', () => seen.push('svc:Home'));
  bus.onAny('svc', (name) => seen.push(`svc:any:${name}`));
  const off = bus.on('other', 'Home', () => seen.push('other:Home'));
  bus.on('other', 'Alert', () => seen.push('other:Alert'));
  bus.emit('Home', {});
  assert.deepEqual(seen.splice(0), ['svc:Home', 'svc:any:Home', 'other:Home']);
  bus.removeOwner('svc');
  bus.emit('Home', {});
  bus.emit('Alert', {});
  assert.deepEqual(seen.splice(0), ['other:Home', 'other:Alert']);
  off();
  bus.emit('Home', {});
  bus.emit('Alert', {});
  assert.deepEqual(seen.splice(0), ['other:Alert']);
  // Removing a listener while an event is being delivered does not skip the ones after it.
  bus.on('a', 'Home', () => { seen.push('a'); bus.removeOwner('b'); });
  bus.on('b', 'Home', () => seen.push('b'));
  bus.emit('Home', {});
  assert.deepEqual(seen.splice(0), ['a', 'b']);
});

test('in the server, a failing listener is logged with the event and owner, and later listeners still run', async (t) => {
  const server = await startTestServer(t);
  server.events.on('faulty-plugin', 'PrinterProfileAdded', () => { throw new Error('plugin exploded'); });
  const seen: string[] = [];
  server.events.on('after', 'PrinterProfileAdded', (p) => seen.push(p.identifier));
  server.events.emit('PrinterProfileAdded', { identifier: 'still-delivered' });
  assert.deepEqual(seen, ['still-delivered']);
  const logFile = join(server.paths.logs, 'gantry.log');
  let entry: Record<string, unknown> | undefined;
  for (let i = 0; i < 50 && !entry; i++) {
    const lines = (await readFile(logFile, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    entry = lines.find((l) => l.msg === 'event listener failed');
    if (!entry) await sleep(50);
  }
  assert.ok(entry, 'logged');
  assert.equal(entry.event, 'PrinterProfileAdded');
  assert.equal(entry.owner, 'faulty-plugin');
  assert.match(JSON.stringify(entry.err), /plugin exploded/);
});
