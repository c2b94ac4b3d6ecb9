// The outbox's budgets: API answers are queued apart from state and events, so a request flood never displaces the
// host's own messages, and answers are never dropped (reading from the broker waits instead).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerConnection } from '../../src/mqtt/connection.ts';

const quiet = { info() {}, warn() {}, error() {}, debug() {}, child() { return quiet; } } as never;

test('BrokerConnection: answers have their own budget; state and events keep theirs whatever the number of answers', () => {
  const conn = new BrokerConnection({ url: 'mqtt://127.0.0.1:1', client: {}, maxPacket: 1 << 20, queueSize: 10,
    reconnectMinMs: 1000, reconnectMaxMs: 1000, subscriptions: [], logger: quiet }, { onConnect() {}, onMessage() {}, onOversized() {} });
  for (let i = 0; i < 5; i++) conn.publish({ topic: `s/${i}`, payload: 'x', qos: 0, retain: true });
  for (let i = 0; i < 3; i++) conn.publish({ topic: 'e', payload: String(i), qos: 0, retain: false });
  for (let i = 0; i < 3000; i++) conn.publish({ topic: `r/${i}`, payload: 'a', qos: 1, retain: false, response: true });
  assert.equal(conn.stats.dropped, 0, 'an answer displaced nothing and was not dropped');
  assert.equal(conn.queuedResponses, 3000);
  assert.equal(conn.queued, 3008);
  // State's own budget still applies to state: events go first when it overflows.
  for (let i = 0; i < 5; i++) conn.publish({ topic: 'e', payload: `more${i}`, qos: 0, retain: false });
  assert.equal(conn.queued - conn.queuedResponses, 10);
  assert.equal(conn.stats.dropped, 3);
  void conn.stop();
});
