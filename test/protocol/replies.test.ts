// Table tests of the pure reply parsers and line utilities, one row per firmware form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalTemperatures, isTemperatureLine, parseTemperatureLine, parseRepetierTarget } from '../../src/protocol/replies/temperature.ts';
import { parseFirmwareLine, parseCapability } from '../../src/protocol/replies/firmware-info.ts';
import { isPositionLine, parsePosition } from '../../src/protocol/replies/position.ts';
import { parseSdReply, parseSdListEntry } from '../../src/protocol/replies/sd-card.ts';
import { ReplyKind, replyKind, parseAdvancedOk, parseResend, classifyError, parseAction } from '../../src/protocol/replies/control.ts';
import { commandCode, frameLine, formatParameters, param, stripComment, xorChecksum } from '../../src/gcode/line.ts';

type Temps = { tools: Record<number, [number, number | null]>; bed?: [number, number | null]; chamber?: [number, number | null]; custom?: Record<string, [number, number | null]> };

const temperatureRows: Array<[string, string, number, Temps]> = [
  ['Marlin M105', 'ok T:21.56 /0.00 B:21.30 /0.00 @:0 B@:0', 0, { tools: { 0: [21.56, 0] }, bed: [21.3, 0] }],
  ['Marlin autoreport', ' T:210.01 /210.00 B:60.02 /60.00 @:64 B@:30', 0, { tools: { 0: [210.01, 210] }, bed: [60.02, 60] }],
  ['Marlin 2 hotends', 'ok T:200.0 /200.0 T0:200.0 /200.0 T1:25.0 /0.0 B:60.0 /60.0 @:70 B@:20 @0:70 @1:0', 1,
    { tools: { 0: [200, 200], 1: [25, 0] }, bed: [60, 60] }],
  ['Marlin M109 wait', ' T:199.8 /200.0 B:60.1 /60.0 @:40 B@:0 W:3', 0, { tools: { 0: [199.8, 200] }, bed: [60.1, 60], custom: { W: [3, null] } }],
  ['Marlin wait ?', ' T:185.3 E:0 W:?', 0, { tools: { 0: [185.3, null] }, custom: { E: [0, null] } }],
  ['lone T is the current tool', 'ok T:180.0 /180.0', 1, { tools: { 1: [180, 180] } }],
  ['Prusa MK3', 'ok T:241.5 /240.0 B:76.5 /85.0 T0:241.5 /240.0 @:26 B@:127 P:0.0 A:38.5', 0,
    { tools: { 0: [241.5, 240] }, bed: [76.5, 85], custom: { P: [0, null], A: [38.5, null] } }],
  ['Smoothieware', 'ok T:21.0 /0.0 @0 T1:22.0 /0.0 @0 B:21.5 /0.0 @0', 0, { tools: { 0: [21, 0], 1: [22, 0] }, bed: [21.5, 0] }],
  ['Klipper', 'ok B:23.0 /0.0 T0:22.9 /0.0', 0, { tools: { 0: [22.9, 0] }, bed: [23, 0] }],
  ['RRF', 'ok T:25.1 /0.0 B:24.8 /0.0', 0, { tools: { 0: [25.1, 0] }, bed: [24.8, 0] }],
  ['Repetier', 'T:20.13 /0 B:20.00 /0 B@:0 @:0', 0, { tools: { 0: [20.13, 0] }, bed: [20, 0] }],
  ['chamber', 'ok T:20.0 /0.0 B:20.0 /0.0 C:40.0 /45.0', 0, { tools: { 0: [20, 0] }, bed: [20, 0], chamber: [40, 45] }],
  ['virtual printer spacing', 'ok T:21.30/ 0.00 B:21.30/ 0.00 @:64', 0, { tools: { 0: [21.3, 0] }, bed: [21.3, 0] }],
];

for (const [name, line, tool, want] of temperatureRows) {
  test(`temperature: ${name}`, () => {
    assert.equal(isTemperatureLine(line.trim()), true);
    const t = canonicalTemperatures(parseTemperatureLine(line), tool);
    const tools = Object.fromEntries([...t.tools].map(([k, v]) => [k, [v.actual, v.target]]));
    assert.deepEqual(tools, want.tools);
    assert.deepEqual(t.bed && [t.bed.actual, t.bed.target], want.bed);
    assert.deepEqual(t.chamber && [t.chamber.actual, t.chamber.target], want.chamber);
    const custom = Object.fromEntries([...t.custom].map(([k, v]) => [k, [v.actual, v.target]]));
    assert.deepEqual(custom, want.custom ?? {});
  });
}

test('temperature: M114 count tails and positions are not temperature lines', () => {
  assert.equal(isTemperatureLine('X:0.00 Y:0.00 Z:250.00 E:0.00 Count A:25000 B:25000 C:25000'), false);
  assert.deepEqual(parseRepetierTarget('TargetExtr1:215'), { heater: 1, target: 215 });
  assert.deepEqual(parseRepetierTarget('TargetBed:60'), { heater: 'bed', target: 60 });
});

test('firmware info: Marlin, Prusa, RRF (space after colon), Klipper, Malyan', () => {
  assert.equal(parseFirmwareLine('FIRMWARE_NAME:Marlin 2.1.2 (Jun 1 2023 12:00:00) SOURCE_CODE_URL:github.com/MarlinFirmware/Marlin PROTOCOL_VERSION:1.0 MACHINE_TYPE:Ender-3 EXTRUDER_COUNT:1')?.name, 'Marlin 2.1.2 (Jun 1 2023 12:00:00)');
  const rrf = parseFirmwareLine('FIRMWARE_NAME: RepRapFirmware for Duet 3 MB6HC FIRMWARE_VERSION: 3.4.5 ELECTRONICS: Duet 3 FIRMWARE_DATE: 2022-11-30');
  assert.equal(rrf?.name, 'RepRapFirmware for Duet 3 MB6HC');
  assert.equal(rrf?.data.FIRMWARE_VERSION, '3.4.5');
  assert.equal(parseFirmwareLine('FIRMWARE_NAME:Klipper FIRMWARE_VERSION:v0.12.0-85-gd785b396')?.data.FIRMWARE_VERSION, 'v0.12.0-85-gd785b396');
  assert.equal(parseFirmwareLine('NAME: Malyan VER: 2.9 MODEL: M200 HW: HA02')?.name, 'Malyan 2.9');
  assert.equal(parseFirmwareLine('FIRMWARE_NAME:Prusa-Firmware 3.13.0 based on Marlin FIRMWARE_URL:https://github.com/prusa3d/Prusa-Firmware')?.name, 'Prusa-Firmware 3.13.0 based on Marlin');
  assert.deepEqual(parseCapability('Cap:AUTOREPORT_TEMP:1'), ['AUTOREPORT_TEMP', true]);
  assert.deepEqual(parseCapability('cap:emergency_parser:0'), ['EMERGENCY_PARSER', false]);
  assert.equal(parseCapability('Cap:BROKEN'), null);
  assert.equal(parseCapability('Cap:X:2'), null);
});

test('position: Marlin, delta, RRF, Klipper, several extruders', () => {
  assert.deepEqual(parsePosition('X:10.00 Y:20.00 Z:0.30 E:0.00 Count X:800 Y:1600 Z:240'), { x: 10, y: 20, z: 0.3, e: 0, es: [] });
  assert.deepEqual(parsePosition('X:0.00 Y:0.00 Z:250.00 E:0.00 Count A:25000 B:25000 C:25000')?.z, 250);
  assert.equal(parsePosition('X:0.000 Y:0.000 Z:0.000 E:0.000 E0:0.0 Count 0 0 0 Machine 0.000 0.000 0.000 Bed comp 0.000')?.e, 0);
  assert.deepEqual(parsePosition('X:1.00 Y:2.00 Z:3.00 E0:4.00 E1:5.00'), { x: 1, y: 2, z: 3, e: null, es: [4, 5] });
  assert.equal(parsePosition('X:1 Y:2 Z:3'), null);
  assert.equal(isPositionLine('ok T:20 /0'), false);
});

test('SD card replies and list entries', () => {
  assert.deepEqual(parseSdReply('SD printing byte 1234/56789'), { kind: 'status', position: 1234, total: 56789 });
  assert.deepEqual(parseSdReply('echo:SD card ok'), { kind: 'cardOk' });
  assert.deepEqual(parseSdReply('SD init fail'), { kind: 'cardFail' });
  assert.deepEqual(parseSdReply('Not SD printing'), { kind: 'notPrinting' });
  assert.deepEqual(parseSdReply('Done printing file'), { kind: 'done' });
  assert.deepEqual(parseSdReply('File opened: cube.gco Size: 123456'), { kind: 'fileOpened', name: 'cube.gco', size: 123456 });
  assert.deepEqual(parseSdListEntry('CUBE~1.GCO 123456'), { name: 'CUBE~1.GCO', size: 123456, longName: null });
  assert.deepEqual(parseSdListEntry('BENCHY~1.GCO 2345678 Benchy Boat.gcode'), { name: 'BENCHY~1.GCO', size: 2345678, longName: 'Benchy Boat.gcode' });
  assert.deepEqual(parseSdListEntry('/FOLDER/PART.GCO'), { name: '/FOLDER/PART.GCO', size: null, longName: null });
});

test('control replies: ok forms, resend forms, busy, wait, start, actions', () => {
  assert.equal(replyKind('ok'), ReplyKind.Ok);
  assert.equal(replyKind('ok T:20 /0'), ReplyKind.Ok);
  assert.equal(replyKind('okay'), ReplyKind.Other);
  assert.equal(replyKind('Resend: 12'), ReplyKind.Resend);
  assert.equal(replyKind('rs N12'), ReplyKind.Resend);
  assert.equal(replyKind('Error:checksum mismatch, Last Line: 41'), ReplyKind.Error);
  assert.equal(replyKind('!! Lost communication with MCU'), ReplyKind.Error);
  assert.equal(replyKind('fatal:Heater decoupled'), ReplyKind.Error);
  assert.equal(replyKind('echo:busy: processing'), ReplyKind.Busy);
  assert.equal(replyKind('busy:processing'), ReplyKind.Busy);
  assert.equal(replyKind('wait'), ReplyKind.Wait);
  assert.equal(replyKind('start'), ReplyKind.Start);
  assert.equal(replyKind('// action:pause'), ReplyKind.Action);
  assert.equal(replyKind('// just a message'), ReplyKind.Other);
  for (const [line, n] of [['Resend: 123', 123], ['Resend:123', 123], ['rs N123', 123], ['rs 123', 123], ['Resend: N:77', 77]] as const) {
    assert.equal(parseResend(line), n, line);
  }
  assert.deepEqual(parseAdvancedOk('ok N1645 P57 B63'), { line: 1645, planner: 57, buffer: 63 });
  assert.deepEqual(parseAdvancedOk('ok P15 B3'), { line: -1, planner: 15, buffer: 3 });
  assert.equal(parseAdvancedOk('ok T:20.0 /0.0'), null);
  assert.deepEqual(parseAction('//action:prompt_begin Filament runout'), { name: 'prompt_begin', params: 'Filament runout' });
});

test('error classes: fatal, resend follows, recoverable, SD, unknown, per-command by firmware', () => {
  const rows: Array<[string, string, string]> = [
    ['Error:checksum mismatch, Last Line: 41', 'Marlin', 'resendFollows'],
    ['Error:Line Number is not Last Line Number+1, Last Line: 41', 'Marlin', 'resendFollows'],
    ['Error:No Line Number with checksum, Last Line: 4', 'Marlin', 'recoverable'],
    ['Error:volume.init failed', 'Marlin', 'sd'],
    ['Error:Unknown command: "X1"', 'Marlin', 'unknownCommand'],
    ['Error:Printer halted. kill() called!', 'Marlin', 'fatal'],
    ['Error:MAXTEMP triggered, system stopped! Heater_ID: 0', 'Marlin', 'fatal'],
    ['!! Lost communication with MCU \'mcu\'', 'Klipper', 'fatal'],
    ['!! Must home axis first: 10.000 0.000 0.000 [0.000]', 'Klipper', 'commandFailed'],
    ['Error: G1: insufficient axes homed', 'RepRapFirmware for Duet 3', 'commandFailed'],
    ['Error: G1: insufficient axes homed', 'Marlin', 'fatal'],
    ['fatal:Heater decoupled', 'Repetier', 'fatal'],
  ];
  for (const [line, fw, cls] of rows) assert.equal(classifyError(line, fw).cls, cls, line);
});

test('gcode: comments, checksums, framing, codes, parameters', () => {
  assert.equal(stripComment('G1 X10 ; move'), 'G1 X10');
  assert.equal(stripComment('; only a comment'), '');
  assert.equal(stripComment('M117 50\\; done'), 'M117 50\\; done');
  assert.equal(stripComment('  G28  '), 'G28');
  assert.equal(xorChecksum('N0 M110 N0'), 125);
  assert.equal(frameLine(0, 'M110 N0'), 'N0 M110 N0*125');
  assert.equal(frameLine(1, 'M115'), 'N1 M115*39');
  assert.equal(frameLine(3, 'G1 X10 Y10 F3000'), 'N3 G1 X10 Y10 F3000*79');
  assert.equal(commandCode('G1 X1'), 'G1');
  assert.equal(commandCode('g01 X1'), 'G1');
  assert.equal(commandCode('M104 S200'), 'M104');
  assert.equal(commandCode('T1'), 'T');
  assert.equal(commandCode('G29.1'), 'G29');
  assert.equal(commandCode('PRINT_START'), null);
  assert.equal(commandCode('@pause'), null);
  assert.equal(param('G1 X10 F3000', 'F'), 3000);
  assert.equal(param('M104 T1 S200', 'T'), 1);
  assert.equal(param('G28 X', 'X'), NaN);
  assert.equal(param('G28', 'X'), null);
  assert.equal(formatParameters('M104 S%(temp)s', { temp: 200 }), 'M104 S200');
  assert.throws(() => formatParameters('M104 S%(temp)s', {}));
});
