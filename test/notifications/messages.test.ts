// What a notification says (src/notifications/messages.ts) and how its target's URL is shown (secret-url.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, placeholders, render } from '../../src/notifications/messages.ts';
import { maskUrl, redact } from '../../src/notifications/secret-url.ts';
import { chooseSender } from '../../src/notifications/sender-choice.ts';
import { parseNtfyUrl } from '../../src/notifications/ntfy-sender.ts';

test('templates fill known placeholders and keep unknown ones visible', () => {
  const values = placeholders('PrintDone', { name: 'benchy.gcode', path: 'a/benchy.gcode', time: 3725 }, 'Prusa');
  assert.equal(render('{printer}: {file} after {time} {nope}', values), 'Prusa: benchy.gcode after 1h 02m {nope}');
  assert.equal(formatDuration(75), '1m 15s');
  assert.equal(formatDuration(null), 'unknown time');
  assert.equal(placeholders('PrintFailed', { name: 'x', error: 'Thermal runaway' }, 'P').error, 'Thermal runaway');
});

test('URLs are masked down to their scheme (and a webhook\'s host), and redacted out of texts', () => {
  assert.equal(maskUrl('tgram://123456:AAF-secret/987'), 'tgram://…');
  assert.equal(maskUrl('https://discord.com/api/webhooks/1/secret'), 'https://discord.com/…');
  assert.equal(maskUrl('http://127.0.0.1:8080'), 'http://127.0.0.1:8080');
  assert.equal(maskUrl('no scheme'), '…');
  const text = redact('failed to reach tgram://123456:AAF-secret/987 (123456:AAF-secret/987)', 'tgram://123456:AAF-secret/987');
  assert.ok(!text.includes('AAF-secret'), text);
});

test('senders are chosen by scheme and transport', () => {
  assert.equal(chooseSender('https://h/x', 'auto', true).kind, 'webhook');
  assert.equal(chooseSender('ntfy://h/t', 'auto', true).kind, 'apprise');
  assert.equal(chooseSender('ntfy://h/t', 'auto', false).kind, 'ntfy');
  assert.equal(chooseSender('ntfy://h/t', 'builtin', true).kind, 'ntfy');
  assert.equal(chooseSender('tgram://a/b', 'auto', false).kind, 'apprise');
  assert.throws(() => chooseSender('tgram://a/b', 'builtin', true), /no built-in sender for tgram/);
  assert.throws(() => chooseSender('plain text', 'auto', true), /starts with its scheme/);
});

test('ntfy URLs: host, topic, credentials and options', () => {
  assert.deepEqual(parseNtfyUrl('ntfy://127.0.0.1:8123/printer?priority=high'), { endpoint: 'http://127.0.0.1:8123/printer', headers: { Priority: 'high' } });
  assert.equal(parseNtfyUrl('ntfys://ntfy.example/t').endpoint, 'https://ntfy.example/t');
  assert.equal(parseNtfyUrl('ntfy://mytopic').endpoint, 'https://ntfy.sh/mytopic');
  assert.match(parseNtfyUrl('ntfy://u:p@h/t').headers.Authorization, /^Basic /);
  assert.throws(() => parseNtfyUrl('ntfy://h/bad topic!'), /topic/);
});
