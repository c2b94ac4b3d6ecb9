// Firmware lines no firmware means to send (line noise, a bad cable, a confused board): long lines in the shapes that
// make a backtracking regular expression quadratic. The link thread reads them in time linear in their length, so a
// print's next line is never held up behind one, and the replies around them still read as they did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeRig, runTranscript } from './scripted.ts';
import { parsePosition } from '../../src/protocol/replies/position.ts';
import { parseResend } from '../../src/protocol/replies/control.ts';
import { parseFirmwareLine } from '../../src/protocol/replies/firmware-info.ts';
import { parseSdReply } from '../../src/protocol/replies/sd-card.ts';
import { trimLineNoise } from '../../src/protocol/line-noise.ts';
import { MAX_CAPABILITIES, MAX_SD_LISTING } from '../../src/protocol/reply-handler.ts';

// The line splitter cuts a line without a newline at 8 KB plus the rest of the read it arrived in.
const N = 16_384;

/** Each shape once: with a backtracking matcher, ≈ 1.5 s or more apiece on this machine at this length, ≈ 1 ms when linear. */
const SHAPES: Array<[string, string]> = [
  ['spaces inside a line that starts with noise', ` a${' '.repeat(N)}a`],
  ['NULs inside a line that starts with noise', `\0a${'\0'.repeat(N)}a`],
  ['a position report with an endless X', `X:${'1'.repeat(N)} Y: Z:`],
  ['a position report with an endless Z', `X:1 Y:1 Z:${'1'.repeat(N)}`],
  ['a firmware line with an endless gap', `NAME:x${' '.repeat(N)}a`],
  ['a resend request with no number', `rs${' '.repeat(N)}x`],
  ['an SD progress report with an endless number', `SD printing byte ${'1'.repeat(N)} x`],
  // Cubic before: three quantifiers could share the spaces (it did not end in minutes).
  ['an SD file report of spaces', `File opened:${' '.repeat(N)}x`],
];

test('long lines in backtracking shapes are read by the engine in linear time, and the link keeps working', async () => {
  const rig = makeRig();
  await runTranscript(rig, '! ready Marlin');
  const took: string[] = [];
  let total = 0;
  for (const [name, line] of SHAPES) {
    const t0 = performance.now();
    rig.transport.reply(line);
    const ms = performance.now() - t0;
    total += ms;
    took.push(`${name}: ${ms.toFixed(1)} ms`);
  }
  // Linear reading takes a few ms for all of them even on a busy machine; quadratic took ≈ 10 s.
  assert.ok(total < 1500, `the engine took ${total.toFixed(0)} ms:\n${took.join('\n')}`);
  // The link still answers as before: a command goes out and its ok is taken.
  await runTranscript(rig, `! send M105\n> M105\n< ok T:20.0 /0.0\n! state OPERATIONAL`);
});

test('the parsers read each long shape as they read its short form', () => {
  const t0 = performance.now();
  assert.equal(parseResend(`rs${' '.repeat(N)}x`), null);
  assert.equal(parseResend(`rs${' '.repeat(N)}17`), 17);
  assert.equal(parseResend('Resend: 5'), 5);
  assert.equal(parseResend('rs N12'), 12);
  assert.equal(parseResend('Resend:N:7'), 7);
  assert.equal(parseResend('rs x12'), null);
  assert.equal(parsePosition(`X:${'1'.repeat(N)} Y: Z:`), null);
  assert.deepEqual(parsePosition(`X:1 Y:2 Z:${'3'.repeat(20)} E:4`), { x: 1, y: 2, z: Number('3'.repeat(20)), e: 4, es: [] });
  assert.deepEqual(parsePosition('X:1.5 Y:-.5 Z:+0.25 E0:1 E1:2.5'), { x: 1.5, y: -0.5, z: 0.25, e: null, es: [1, 2.5] });
  assert.equal(parsePosition('X:1. Y:2 Z:3 E:4'), null, 'a number ends in a digit');
  assert.equal(parseFirmwareLine(`NAME:x${' '.repeat(N)}a`)?.data.NAME, `x${' '.repeat(N)}a`);
  assert.deepEqual(parseFirmwareLine('FIRMWARE_NAME:Marlin 2.1 (Github)   SOURCE_CODE_URL:github.com/x PROTOCOL_VERSION:1.0 MACHINE_TYPE:Ender')?.data, {
    FIRMWARE_NAME: 'Marlin 2.1 (Github)', SOURCE_CODE_URL: 'github.com/x', PROTOCOL_VERSION: '1.0', MACHINE_TYPE: 'Ender' });
  assert.equal(parseSdReply(`SD printing byte ${'1'.repeat(N)} x`), null);
  assert.deepEqual(parseSdReply('SD printing byte 12 / 345'), { kind: 'status', position: 12, total: 345 });
  assert.deepEqual(parseSdReply('SD printing byte 12/345'), { kind: 'status', position: 12, total: 345 });
  assert.equal(parseSdReply(`File opened:${' '.repeat(N)}x`), null);
  assert.deepEqual(parseSdReply('File opened: cube 2.gco Size: 1234'), { kind: 'fileOpened', name: 'cube 2.gco', size: 1234 });
  assert.equal(trimLineNoise(` a${' '.repeat(N)}a`), `a${' '.repeat(N)}a`);
  assert.equal(trimLineNoise('\0\xff\xfeok T:20.0 \r\x7f\t'), 'ok T:20.0');
  assert.equal(trimLineNoise('ok\u00a0\u2028'), 'ok', 'Unicode spaces at the end go too');
  assert.equal(trimLineNoise('\u00a0ok'), 'ok', 'anything outside printable ASCII at the start goes');
  assert.equal(trimLineNoise(' \0 '), '');
  assert.equal(trimLineNoise('ok'), 'ok');
  const ms = performance.now() - t0;
  assert.ok(ms < 1500, `the parsers took ${ms.toFixed(0)} ms`);
});

// The expressions these parsers used before, which read every short line right: the oracle for the linear ones.
// eslint-disable-next-line no-control-regex
const OLD_EDGE = /^[^\x21-\x7e]+|[\s\x00-\x1f\x7f]+$/g;
const OLD_NUM = String.raw`[-+]?\d*\.?\d+`;
const OLD_POS = new RegExp(String.raw`X:\s*(${OLD_NUM})\s*Y:\s*(${OLD_NUM})\s*Z:\s*(${OLD_NUM})\s*(?:E:\s*(${OLD_NUM})|((?:E\d+:\s*${OLD_NUM}\s*)+))`);
const OLD_PER_E = new RegExp(String.raw`E(\d+):\s*(${OLD_NUM})`, 'g');
const OLD_KEY = /(^|\s+)([A-Z][A-Z0-9_]*):/g;

function oldPosition(line: string): unknown {
  const m = OLD_POS.exec(line);
  if (!m) return null;
  const es: number[] = [];
  if (m[5]) for (const e of m[5].matchAll(OLD_PER_E)) es[Number(e[1])] = Number(e[2]);
  return { x: Number(m[1]), y: Number(m[2]), z: Number(m[3]), e: m[4] !== undefined ? Number(m[4]) : null, es };
}

const lineOf = (chars: string) => fc.string({ maxLength: 40, unit: fc.constantFrom(...chars) });

test('the linear readings agree with the expressions they replace on every short line (property)', () => {
  fc.assert(fc.property(lineOf('rsN: 0123.\t-+x\0'), (body) => {
    const line = `rs${body}`;
    const m = /(?:N:?|:|\s)\s*(\d+)/.exec(line.slice(2));
    assert.equal(parseResend(line), m ? Number(m[1]) : null);
  }), { numRuns: 3000 });
  fc.assert(fc.property(lineOf('XYZE0123:.-+ \t/'), fc.constantFrom('', 'X:', 'X:1 Y:', 'X:1 Y:2 Z:'), (body, head) => {
    const line = head + body;
    assert.deepEqual(parsePosition(line), oldPosition(line));
  }), { numRuns: 5000 });
  fc.assert(fc.property(lineOf('NAMEF_0: \t.a'), (body) => {
    const line = `NAME:${body}`;
    const keys = [...line.matchAll(OLD_KEY)];
    const data: Record<string, string> = {};
    keys.forEach((m, i) => { data[m[2]] = line.slice(m.index + m[0].length, keys[i + 1]?.index ?? line.length).trim(); });
    const read = parseFirmwareLine(line);
    assert.deepEqual(read?.data, data.NAME ? data : undefined);
  }), { numRuns: 3000 });
  fc.assert(fc.property(lineOf('012 /\tx'), (body) => {
    const m = /(\d+)\s*\/\s*(\d+)/.exec(body);
    assert.deepEqual(parseSdReply(`SD printing byte ${body}`), m ? { kind: 'status', position: Number(m[1]), total: Number(m[2]) } : null);
  }), { numRuns: 3000 });
  fc.assert(fc.property(lineOf('ab. \tSize:0123'), (body) => {
    const line = `File opened:${body}`;
    const m = /File opened:\s*(.*?)\s+Size:\s*(\d+)/.exec(line);
    assert.deepEqual(parseSdReply(line), m ? { kind: 'fileOpened', name: m[1], size: Number(m[2]) } : null);
  }), { numRuns: 5000 });
  fc.assert(fc.property(lineOf('ok \t\r\0\x7f\xa0\xff\u2028\u3000'), (line) => {
    assert.equal(trimLineNoise(line), line.replace(OLD_EDGE, ''));
  }), { numRuns: 5000 });
});

test('an SD listing whose end never comes: reports in it are read as reports, and it ends at MAX_SD_LISTING files', async () => {
  const messages: string[] = [];
  const rig = makeRig({}, { message: (text) => { messages.push(text); } });
  await runTranscript(rig, '! ready Marlin');
  const count = (name: string) => rig.events.filter(([n]) => n === name).length;
  const temps = count('temperatures');
  rig.transport.reply('Begin file list');
  rig.transport.reply('CUBE.GCO 1234');
  // Before, this autoreport (and every later one) was taken for a file named `T:210.0`, for as long as no end came.
  rig.transport.reply(' T:210.0 /210.0 B:60.0 /60.0 @:64 B@:30');
  rig.transport.reply('X:1.00 Y:2.00 Z:3.00 E:0.00 Count X:0 Y:0 Z:0');
  assert.equal(count('temperatures'), temps + 1);
  assert.equal(count('position'), 1);
  for (let i = 1; i < MAX_SD_LISTING + 5; i++) rig.transport.reply(`F${i}.GCO ${i}`);
  const lists = rig.events.filter(([n]) => n === 'sdList').map(([, l]) => l as Array<{ name: string }>);
  assert.equal(lists.length, 1, 'the listing ended at its limit');
  assert.equal(lists[0].length, MAX_SD_LISTING);
  assert.deepEqual(lists[0].slice(0, 2).map((e) => e.name), ['CUBE.GCO', 'F1.GCO']);
  assert.match(messages.join('\n'), /SD card listing cut at 10000 files/);
  // What follows the cut is not a file.
  rig.transport.reply('End file list');
  assert.equal(rig.events.filter(([n]) => n === 'sdList').length, 1);
});

test('capabilities are kept up to MAX_CAPABILITIES names; those known still change', async () => {
  const rig = makeRig();
  await runTranscript(rig, '! ready Marlin');
  rig.transport.reply('Cap:AUTOREPORT_TEMP:0');
  for (let i = 0; i < MAX_CAPABILITIES + 100; i++) rig.transport.reply(`Cap:MADE_UP_${i}:1`);
  const caps = rig.engine.capabilities();
  assert.equal(Object.keys(caps).length, MAX_CAPABILITIES);
  rig.transport.reply('Cap:AUTOREPORT_TEMP:1');
  assert.equal(rig.engine.capabilities().AUTOREPORT_TEMP, true);
});
