// Settings API: every mapped field read and written through its config.yaml path, api.key visibility, bad input, live
// effects. What only the routes and config.yaml answer runs on the fake-service app (test/helpers/inject-app.ts); what
// the printer must see (its scripts) and a restart run on a real server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startTestServer } from '../helpers/server.ts';
import { injectApp } from '../helpers/inject-app.ts';
import { SETTINGS_FIELDS, getPath, setPath } from '../../src/http/settings-map.ts';
import { tempDir } from '../helpers/temp-dir.ts';

type Plain = Record<string, unknown>;
/** A real server or the fake-service app: both answer `api` with a fetch Response. */
interface Host {
  api(path: string, init?: { method?: string; json?: unknown; body?: string; key?: string | null; headers?: Record<string, string> }): Promise<Response>;
  paths: { config: string };
}

async function getSettings(s: Host, key?: string): Promise<Plain> {
  const res = await s.api('/api/settings', key ? { key } : {});
  assert.equal(res.status, 200);
  return res.json() as Promise<Plain>;
}

async function postSettings(s: Host, body: unknown, key?: string): Promise<Response> {
  return s.api('/api/settings', { method: 'POST', json: body, ...(key ? { key } : {}) });
}

async function onDisk(s: Host): Promise<Plain> {
  return (parseYaml(await readFile(s.paths.config, 'utf8')) ?? {}) as Plain;
}

/** A value for each field that differs from its default and passes validation. */
function sampleFor(api: string, current: unknown, dir: string): unknown {
  const explicit: Record<string, unknown> = {
    'appearance.color': 'violet',
    'appearance.defaultLanguage': 'de',
    'gcodeAnalysis.runAt': 'always',
    'scripts.gcode': { afterPrintDone: 'M84\nM117 Done', beforePrintStarted: 'G28' },
    'serial.port': '/dev/ttyUSB7',
    'serial.baudrate': 115200,
    'serial.useParityWorkaround': 'always',
    'serial.notifySuppressedCommands': 'never',
    'serial.supportResendsWIthoutOk': true,
    'serial.supportResendsWithoutOk': false,
    'serial.encoding': 'utf-8',
    'serial.additionalBaudrates': [500000],
    'serial.blacklistedBaudrates': [9600],
    'serial.additionalPorts': ['/dev/ttyS*'],
    'serial.blacklistedPorts': ['/dev/ttyAMA0'],
    'server.commands.systemShutdownCommand': 'sudo shutdown -h now',
    'server.commands.systemRestartCommand': 'sudo reboot',
    'server.commands.serverRestartCommand': 'sudo systemctl restart gantry',
    'server.onlineCheck.enabled': true,
    'server.onlineCheck.interval': 30,
    'server.pluginBlacklist.enabled': false,
    'server.pluginBlacklist.ttl': 60,
    'slicing.defaultSlicer': 'prusaslicer',
    'system.actions': [{ action: 'hello', name: 'Say hello', command: 'echo hello', confirm: 'Sure?' }, { action: 'divider' }],
    'system.events': [{ event: 'PrintDone', command: 'echo done', type: 'system' }],
    'temperature.profiles': [{ name: 'PETG', extruder: 240, bed: 80 }],
    'terminalFilters': [{ name: 'Only this', regex: '^Recv: ok$' }],
    'webcam.streamRatio': '4:3',
    'webcam.streamUrl': 'http://127.0.0.1:8080/?action=stream',
    'webcam.snapshotUrl': 'http://127.0.0.1:8080/?action=snapshot',
    'webcam.ffmpegPath': '/usr/bin/ffmpeg',
    'webcam.bitrate': '5000k',
    'webcam.ffmpegVideoCodec': 'mpeg2video',
    'webcam.renderAfterPrint': 'success',
    'folder.uploads': join(dir, 'up'),
    'folder.timelapse': join(dir, 'tl'),
    'folder.timelapseTmp': join(dir, 'tltmp'),
    'folder.logs': join(dir, 'logs2'),
    'folder.watched': join(dir, 'watch'),
  };
  if (api in explicit) return explicit[api];
  if (typeof current === 'boolean') return !current;
  if (typeof current === 'number') return Number.isInteger(current) ? (current > 1 ? current - 1 : current + 1) : current + 0.5;
  if (typeof current === 'string') return `${current}x`;
  if (Array.isArray(current)) return [...current, 'M999'];
  throw new Error(`no sample for ${api} (current ${JSON.stringify(current)})`);
}

test('every settings field is read, written through its config.yaml path, and read back', async (t) => {
  const s = await injectApp(t);
  const dir = await tempDir(t, 'gantry-folders-');
  let count = 0;
  const before = await getSettings(s);
  for (const f of SETTINGS_FIELDS) {
    if (f.readOnly) continue;
    const current = getPath(before, f.api.split('.'));
    assert.notEqual(current, undefined, `GET lacks ${f.api}`);
    const value = sampleFor(f.api, current, dir);
    const body: Plain = {};
    setPath(body, f.api.split('.'), value);
    const res = await postSettings(s, body);
    assert.equal(res.status, 200, `${f.api}: ${await res.clone().text()}`);
    const answered = await res.json() as Plain;
    // Scripts are listed with the built-in ones the sample leaves alone.
    const shown = f.api === 'scripts.gcode' ? { ...(current as Plain), ...(value as Plain) } : value;
    assert.deepEqual(getPath(answered, f.api.split('.')), shown, `POST answer for ${f.api}`);
    const stored = getPath(await onDisk(s), f.config);
    assert.deepEqual(stored, f.fromApi ? f.fromApi(value) : value, `config.yaml ${f.config.join('.')} for ${f.api}`);
    count++;
  }
  assert.ok(count > 130, `only ${count} fields covered`);
  // The POST answers above are built like GET; one GET at the end confirms what is in effect.
  const after = await getSettings(s);
  assert.equal(getPath(after, ['serial', 'timeoutConnection']), 9);
  assert.equal(getPath(after, ['folder', 'timelapseTmp']), join(dir, 'tltmp'));
});

test('renamed fields land under their config.yaml names', async (t) => {
  const s = await injectApp(t);
  const res = await postSettings(s, {
    feature: { gcodeViewer: false, sizeThreshold: 1000, mobileSizeThreshold: 500, waitForStart: true },
    serial: { timeoutConnection: 12.5, maxTimeoutsIdle: 0, capAutoreportTemp: false, timeoutCommunication: 45 },
    webcam: { ffmpegPath: '/usr/bin/ffmpeg', streamUrl: '/webcam/?action=stream' },
    printer: { defaultExtrusionLength: 7 },
    folder: { timelapseTmp: join(s.baseDir, 'elsewhere-tmp') },
    server: { onlineCheck: { interval: 10 }, pluginBlacklist: { ttl: 2 } },
  });
  assert.equal(res.status, 200);
  const disk = await onDisk(s);
  assert.deepEqual(disk.gcodeViewer, { enabled: false, sizeThreshold: 1000, mobileSizeThreshold: 500 });
  assert.equal(getPath(disk, ['serial', 'waitForStartOnConnect']), true);
  assert.equal(getPath(disk, ['serial', 'timeout', 'connection']), 12.5);
  assert.equal(getPath(disk, ['serial', 'timeout', 'communication']), 45);
  assert.equal(getPath(disk, ['serial', 'maxCommunicationTimeouts', 'idle']), 0);
  assert.equal(getPath(disk, ['serial', 'capabilities', 'autoreport_temp']), false);
  assert.equal(getPath(disk, ['webcam', 'ffmpeg']), '/usr/bin/ffmpeg');
  assert.equal(getPath(disk, ['webcam', 'stream']), '/webcam/?action=stream');
  assert.equal(getPath(disk, ['printerParameters', 'defaultExtrusionLength']), 7);
  assert.equal(getPath(disk, ['folder', 'timelapse_tmp']), join(s.baseDir, 'elsewhere-tmp'));
  assert.equal(getPath(disk, ['server', 'onlineCheck', 'interval']), 600);
  assert.equal(getPath(disk, ['server', 'pluginBlacklist', 'ttl']), 120);
  // The engine reads timeouts from config.current, so the change is live without a restart.
  assert.equal(s.config.current.serial.timeout.connection, 12.5);
  const got = await getSettings(s);
  assert.equal(getPath(got, ['server', 'onlineCheck', 'interval']), 10);
  assert.equal(getPath(got, ['feature', 'waitForStart']), true);
  assert.equal(getPath(got, ['serial', 'waitForStart']), true);
});

test('defaults: the reference values clients rely on', async (t) => {
  const s = await injectApp(t);
  const g = await getSettings(s);
  assert.equal(getPath(g, ['serial', 'timeoutConnection']), 10);
  assert.deepEqual(getPath(g, ['serial', 'longRunningCommands']), ['G4', 'G28', 'G29', 'G30', 'G32', 'M400', 'M226', 'M600']);
  assert.equal(getPath(g, ['server', 'onlineCheck', 'interval']), 15);
  assert.equal(getPath(g, ['server', 'pluginBlacklist', 'ttl']), 15);
  assert.deepEqual(getPath(g, ['temperature', 'profiles']), [{ name: 'ABS', extruder: 210, bed: 100 }, { name: 'PLA', extruder: 180, bed: 60 }]);
  assert.equal(getPath(g, ['appearance', 'color']), 'default');
  assert.equal(getPath(g, ['feature', 'gcodeViewer']), true);
  assert.equal(getPath(g, ['folder', 'uploads']), s.paths.uploads);
  assert.equal(getPath(g, ['folder', 'timelapseTmp']), join(s.paths.timelapse, 'tmp'));
  assert.ok((getPath(g, ['serial', 'portOptions']) as string[]).includes('VIRTUAL'), 'the virtual printer is offered');
  assert.ok((getPath(g, ['serial', 'baudrateOptions']) as number[]).includes(115200));
  assert.equal(getPath(g, ['gcodeAnalysis', 'runAt']), 'idle');
  assert.equal(typeof getPath(g, ['webcam', 'webcamEnabled']), 'boolean');
  assert.equal(getPath(g, ['webcam', 'streamUrl']), '');
});

test('scripts.gcode: a fresh server lists the built-in scripts; setting, replacing and resetting one', async (t) => {
  const s = await startTestServer(t);
  const scripts = getPath(await getSettings(s), ['scripts', 'gcode']) as Record<string, string>;
  assert.deepEqual(Object.keys(scripts).sort(), ['afterPrintCancelled', 'snippets/disable_bed', 'snippets/disable_hotends']);
  assert.deepEqual(scripts.afterPrintCancelled.split('\n'), ['; disable motors', 'M84', '', ';disable all heaters',
    "{% snippet 'disable_hotends' %}", "{% snippet 'disable_bed' %}", ';disable fan', 'M106 S0']);
  assert.match(scripts['snippets/disable_hotends'], /sharedNozzle[\s\S]*M104 T0 S0[\s\S]*range\(printer_profile\.extruder\.count\)[\s\S]*M104 T\{\{ tool \}\} S0/);
  assert.match(scripts['snippets/disable_bed'], /printer_profile\.heatedBed[\s\S]*M140 S0/);
  // What is shown is what runs: the default cancel script rendered for the default profile (one hotend, heated bed).
  assert.deepEqual(await s.printer.script('afterPrintCancelled'), ['M84', 'M104 T0 S0', 'M140 S0', 'M106 S0']);

  const set = await postSettings(s, { scripts: { gcode: { beforeToolChange: 'M117 before', afterPrintCancelled: 'M84' } } });
  assert.equal(set.status, 200);
  const after = getPath(await set.json() as Plain, ['scripts', 'gcode']) as Record<string, string>;
  assert.deepEqual(after, { ...scripts, beforeToolChange: 'M117 before', afterPrintCancelled: 'M84' });
  assert.deepEqual(getPath(await onDisk(s), ['scripts', 'gcode']), { beforeToolChange: 'M117 before', afterPrintCancelled: 'M84' });
  assert.deepEqual(await s.printer.script('afterPrintCancelled'), ['M84']);
  // null is "not set": the built-in script is listed and runs again.
  assert.equal((await postSettings(s, { scripts: { gcode: { afterPrintCancelled: null } } })).status, 200);
  assert.equal((getPath(await getSettings(s), ['scripts', 'gcode']) as Record<string, string>).afterPrintCancelled, scripts.afterPrintCancelled);
  assert.deepEqual(await s.printer.script('afterPrintCancelled'), ['M84', 'M104 T0 S0', 'M140 S0', 'M106 S0']);
});

test('scripts.gcode: scripts kept as files in the scripts folder are listed as they run, and echoing them back pins nothing', async (t) => {
  const s = await startTestServer(t);
  await mkdir(join(s.paths.scripts, 'snippets'), { recursive: true });
  await writeFile(join(s.paths.scripts, 'afterPrintDone'), 'M117 done from file\n{% snippet \'park\' %}\n');
  await writeFile(join(s.paths.scripts, 'snippets', 'park'), 'G1 X0 Y200 F6000\n');
  await writeFile(join(s.paths.scripts, '.hidden'), 'M999\n');
  const scripts = getPath(await getSettings(s), ['scripts', 'gcode']) as Record<string, string>;
  assert.equal(scripts.afterPrintDone, 'M117 done from file\n{% snippet \'park\' %}\n');
  assert.equal(scripts['snippets/park'], 'G1 X0 Y200 F6000\n');
  assert.ok(!('.hidden' in scripts), 'dot files are not scripts');
  assert.deepEqual(await s.printer.script('afterPrintDone'), ['M117 done from file', 'G1 X0 Y200 F6000']);
  // A settings page saving everything it was shown leaves the files in charge.
  assert.equal((await postSettings(s, { scripts: { gcode: scripts } })).status, 200);
  assert.equal(getPath(await onDisk(s), ['scripts', 'gcode']), undefined);
  await writeFile(join(s.paths.scripts, 'afterPrintDone'), 'M117 edited by hand\n');
  assert.deepEqual(await s.printer.script('afterPrintDone'), ['M117 edited by hand']);
  // A setting still wins over the file.
  assert.equal((await postSettings(s, { scripts: { gcode: { afterPrintDone: 'M117 from settings' } } })).status, 200);
  assert.equal((getPath(await getSettings(s), ['scripts', 'gcode']) as Record<string, string>).afterPrintDone, 'M117 from settings');
  assert.deepEqual(await s.printer.script('afterPrintDone'), ['M117 from settings']);
});

test('api.key: admins see it, other readers get "n/a", and nobody can set it', async (t) => {
  const s = await injectApp(t);
  await s.access.users.addUser({ name: 'reader', password: 'secret-pass-1', groups: ['users'] });
  const readerKey = await s.access.users.generateUserKey('reader');
  assert.equal(getPath(await getSettings(s), ['api', 'key']), s.apiKey);
  const asReader = await getSettings(s, readerKey);
  assert.equal(getPath(asReader, ['api', 'key']), 'n/a');
  // Readers may read but not write.
  assert.equal((await postSettings(s, { appearance: { name: 'x' } }, readerKey)).status, 403);

  const res = await postSettings(s, { api: { key: 'attacker-chosen', allowCrossOrigin: true } });
  assert.equal(res.status, 200);
  assert.equal(s.config.current.api.key, s.apiKey);
  assert.equal(getPath(await res.json(), ['api', 'key']), s.apiKey);
  assert.equal(s.config.current.api.allowCrossOrigin, true);
});

test('webcam block only with WEBCAM; templates only for admins; anonymous is refused', async (t) => {
  const s = await injectApp(t);
  await s.access.users.addUser({ name: 'blind', password: 'secret-pass-2', groups: [], permissions: ['SETTINGS_READ'] });
  const key = await s.access.users.generateUserKey('blind');
  assert.deepEqual((await getSettings(s, key)).webcam, {});
  const admin = await getSettings(s);
  assert.equal(getPath(admin, ['webcam', 'webcams', '0', 'name']) ?? (admin.webcam as { webcams: Array<{ name: string }> }).webcams[0].name, 'classic');
  assert.equal((await s.api('/api/settings', { key: null })).status, 403);

  const tpl = await s.api('/api/settings/templates');
  assert.equal(tpl.status, 200);
  const { order } = await tpl.json() as { order: Record<string, Array<{ id: string; name: string }>> };
  for (const k of ['about', 'generic', 'navbar', 'settings', 'sidebar', 'tab', 'usersettings', 'wizard']) assert.ok(Array.isArray(order[k]), k);
  assert.deepEqual(order.tab.map((e) => e.id).slice(0, 4), ['temperature', 'control', 'gcodeviewer', 'terminal']);
  assert.equal((await s.api('/api/settings/templates', { key })).status, 403);
});

test('a wrong type or out-of-range value is 400 naming the field, and nothing is saved', async (t) => {
  const s = await injectApp(t);
  assert.equal((await postSettings(s, { appearance: { name: 'Before' } })).status, 200);
  const before = await readFile(s.paths.config, 'utf8');
  const cases: Array<[unknown, RegExp]> = [
    [{ appearance: { name: 'After' }, serial: { timeoutConnection: 'soon' } }, /serial\.timeoutConnection/],
    [{ appearance: { name: 'After', color: 'plaid' } }, /appearance\.color/],
    [{ temperature: { sendAutomaticallyAfter: 31 } }, /temperature\.sendAutomaticallyAfter/],
    [{ temperature: { profiles: [{ name: 'X', extruder: 'hot', bed: 60 }] } }, /temperature\.profiles/],
    [{ feature: { sizeThreshold: -1 } }, /feature\.sizeThreshold/],
    [{ serial: 'fast' }, /serial/],
    [{ server: { onlineCheck: { interval: 'hourly' } } }, /server\.onlineCheck\.interval/],
    [{ webcam: { bitrate: 'lots' } }, /bitrate/],
    [{ plugins: { foo: 3 } }, /plugins\.foo/],
    [{ folder: { uploads: '' } }, /folders is invalid/],
  ];
  for (const [body, pattern] of cases) {
    const res = await postSettings(s, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.match((await res.json() as { error: string }).error, pattern);
  }
  const bad = await s.api('/api/settings', { method: 'POST', body: '[1,2]', headers: { 'Content-Type': 'application/json' } });
  assert.equal(bad.status, 400);
  assert.deepEqual(await bad.json(), { error: 'Malformed JSON body in request' });
  assert.equal(await readFile(s.paths.config, 'utf8'), before);
  assert.equal(s.config.current.appearance.name, 'Before');
});

test('POST fires SettingsUpdated, arrays replace, unknown keys are ignored, {} changes nothing', async (t) => {
  const s = await injectApp(t);
  const seen: Array<{ config_hash: string; effective_hash: string }> = [];
  s.events.on('test', 'SettingsUpdated', (p) => seen.push(p));
  const res = await postSettings(s, { serial: { longRunningCommands: ['G28'] }, nonsense: { a: 1 }, appearance: { bogus: true } });
  assert.equal(res.status, 200);
  assert.deepEqual(s.config.current.serial.longRunningCommands, ['G28']);
  assert.equal(seen.length, 1);
  assert.match(seen[0].config_hash, /^[0-9a-f]{40}$/);
  assert.equal(seen[0].config_hash, s.config.hash());
  assert.equal(seen[0].effective_hash, s.config.effectiveHash());
  assert.equal((await onDisk(s)).nonsense, undefined);
  const unchanged = await readFile(s.paths.config, 'utf8');
  const empty = await postSettings(s, {});
  assert.equal(empty.status, 200);
  assert.equal(await readFile(s.paths.config, 'utf8'), unchanged);
});

test('GET /api/settings revalidates with ETag / 304 until something changes', async (t) => {
  const s = await injectApp(t);
  const first = await s.api('/api/settings');
  const etag = first.headers.get('etag');
  assert.ok(etag);
  const again = await s.api('/api/settings', { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), '');
  assert.equal((await postSettings(s, { appearance: { name: 'Changed' } })).status, 200);
  assert.equal((await s.api('/api/settings', { headers: { 'If-None-Match': etag } })).status, 200);
});

test('posting the whole tree back does not pin defaults in config.yaml', async (t) => {
  const s = await injectApp(t);
  const before = await onDisk(s);
  const tree = await getSettings(s);
  const res = await postSettings(s, tree);
  assert.equal(res.status, 200, await res.clone().text());
  assert.deepEqual(await onDisk(s), before);
  // A changed value in the same round trip is stored, and only that one.
  setPath(tree, ['temperature', 'cutoff'], 45);
  assert.equal((await postSettings(s, tree)).status, 200);
  assert.deepEqual(await onDisk(s), { ...before, temperature: { cutoff: 45 } });
  // Back to the default value: the stored override follows (the effective value is what matters).
  setPath(tree, ['temperature', 'cutoff'], 30);
  assert.equal((await postSettings(s, tree)).status, 200);
  assert.equal(s.config.current.temperature.cutoff, 30);
});

test('CORS follows api.allowCrossOrigin at once', async (t) => {
  const s = await injectApp(t);
  const probe = () => s.api('/api/version', { headers: { Origin: 'http://elsewhere.example' } });
  assert.equal((await probe()).headers.get('access-control-allow-origin'), null);
  assert.equal((await postSettings(s, { api: { allowCrossOrigin: true } })).status, 200);
  assert.equal((await probe()).headers.get('access-control-allow-origin'), 'http://elsewhere.example');
});

test('plugins subtree is kept; discovery.upnpUuid is a stable per-installation UUID', async (t) => {
  const baseDir = await tempDir(t, 'gantry-uuid-');
  const first = await startTestServer(undefined, { baseDir });
  const g1 = await getSettings(first);
  const uuid = getPath(g1, ['plugins', 'discovery', 'upnpUuid']) as string;
  assert.match(uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const res = await postSettings(first, { plugins: { myplugin: { level: 3, nested: { a: [1, 2] } }, discovery: { upnpUuid: 'forged', publicPort: 80 } } });
  assert.equal(res.status, 200);
  await first.stop();

  const second = await startTestServer(undefined, { baseDir });
  try {
    const g2 = await getSettings(second);
    assert.equal(getPath(g2, ['plugins', 'discovery', 'upnpUuid']), uuid);
    assert.equal(getPath(g2, ['plugins', 'discovery', 'publicPort']), 80);
    assert.deepEqual(getPath(g2, ['plugins', 'myplugin']), { level: 3, nested: { a: [1, 2] } });
  } finally {
    await second.stop();
  }
});
