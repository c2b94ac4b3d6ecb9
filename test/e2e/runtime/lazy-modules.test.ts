// The build's stand-ins for modules an idle server does not use (scripts/build.mjs: lazy built-ins, TypeBox's format checkers, Ajv) load nothing until first use and then behave as the real modules do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { ROOT } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
// @ts-expect-error: the build script is plain JavaScript without type declarations
import { lazyAjv, lazyBuiltins, lazyFormatCheckers } from '../../../scripts/build.mjs';

/** Bundles `<dir>/probe.js` into `<dir>/probe.bundle.mjs` as the build does (ES module, its require banner) with `plugins`. */
async function bundleProbe(dir: string, plugins: esbuild.Plugin[]): Promise<void> {
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [join(dir, 'probe.js')],
    nodePaths: [join(ROOT, 'node_modules')],
    outfile: join(dir, 'probe.bundle.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: "import { createRequire as __gantryRequire } from 'node:module'; const require = __gantryRequire(import.meta.url);" },
    plugins,
    logLevel: 'error',
  });
}

/** Counts regular expressions built with Unicode script classes (the IDNA rules' kind) from the start of the process. */
const COUNT_SCRIPT_REGEXPS = `
globalThis.scriptRegExps = 0;
globalThis.RegExp = new Proxy(RegExp, { construct(target, args) { if (String(args[0]).includes('Script=')) globalThis.scriptRegExps++; return Reflect.construct(target, args); } });
`;

/** Bundled with the build's own plugins, run in a fresh node: each step reports which built-ins were loaded by then. */
const PROBE = `
import { spawn, ChildProcess } from 'node:child_process';
import zlib, { gzipSync, gunzipSync, constants, Gzip } from 'node:zlib';
import * as https from 'node:https';
import { lookup } from 'node:dns/promises';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { Value } from 'typebox/value';
import { Format } from 'typebox/format';
const cjsHttps = require('node:https');
const loaded = (name) => process.moduleLoadList.includes('NativeModule ' + name);
const report = {};
report.atStart = ['child_process', 'zlib', 'https', 'tls', 'dns', 'readline'].filter(loaded);
report.scriptRegExpsAtStart = globalThis.scriptRegExps;
report.exportsKnownEarly = typeof spawn === 'function' && typeof Gzip === 'function' && typeof constants === 'object' && !loaded('zlib') && !loaded('child_process');
// Calls, constants, classes (new, instanceof, statics), a default import, a CommonJS require.
const round = gunzipSync(gzipSync(Buffer.from('G1 X10 Y10'))).toString();
const gz = new Gzip();
report.zlib = { round, instance: gz instanceof Gzip && gz instanceof zlib.Gzip, viaDefault: typeof zlib.createGunzip, okConstant: constants.Z_OK, loaded: loaded('zlib') };
gz.close();
const child = spawn(process.execPath, ['-e', 'process.stdout.write("42")']);
let out = '';
child.stdout.on('data', (d) => { out += d; });
report.child = { instance: child instanceof ChildProcess, code: await new Promise((r) => child.on('close', r)), out };
// An object export: its methods run against the real object (Agent's own state), a CommonJS require sees the same.
report.https = { agentSockets: typeof https.globalAgent.getName({ host: 'example.com', port: 443 }), request: typeof cjsHttps.request, sameRequest: cjsHttps.request === https.request };
report.dns = (await lookup('localhost')).address.length > 0;
const lines = [];
for await (const line of createInterface({ input: Readable.from(['a\\nb\\n']) })) lines.push(line);
report.readline = lines;
report.formats = [Format.Test('hostname', 'printer.local'), Format.Test('hostname', '-bad-.local'), Format.Test('idn-hostname', 'drucker.bücher.example'), Format.Test('email', 'a@b.example'), Format.Test('email', 'nope')];
report.scriptRegExpsAfter = globalThis.scriptRegExps;
report.schemaFormat = Value.Check({ type: 'string', format: 'ipv4' }, '10.0.0.1') && !Value.Check({ type: 'string', format: 'ipv4' }, '10.0.0.300');
console.log(JSON.stringify(report));
`;

test('lazy stand-ins load nothing at start and behave as the real modules once used', async (t) => {
  const dir = await tempDir(t, 'gantry-lazy-');
  await writeFile(join(dir, 'probe.js'), PROBE);
  await writeFile(join(dir, 'count.mjs'), COUNT_SCRIPT_REGEXPS);
  await bundleProbe(dir, [lazyFormatCheckers, lazyBuiltins()]);
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', join(dir, 'count.mjs'), join(dir, 'probe.bundle.mjs')]);
  const report = JSON.parse(stdout);
  assert.deepEqual(report.atStart, [], 'built-ins loaded before anything used them');
  assert.equal(report.exportsKnownEarly, true);
  assert.deepEqual(report.zlib, { round: 'G1 X10 Y10', instance: true, viaDefault: 'function', okConstant: 0, loaded: true });
  assert.deepEqual(report.child, { instance: true, code: 0, out: '42' });
  assert.deepEqual(report.https, { agentSockets: 'string', request: 'function', sameRequest: true });
  assert.equal(report.dns, true);
  assert.deepEqual(report.readline, ['a', 'b']);
  assert.deepEqual(report.formats, [true, false, true, true, false]);
  // TypeBox's IDNA rules were built on first use, not at start (the count works: it sees them then).
  assert.equal(report.scriptRegExpsAtStart, 0);
  assert.ok(report.scriptRegExpsAfter > 0, `script regexps after use: ${report.scriptRegExpsAfter}`);
  assert.equal(report.schemaFormat, true);
});

/**
 * The server's own lazy compilers (src/http) bundled with the build's plugins; a test plugin marks the moment Ajv's
 * main module is evaluated. Fastify's order: validators are made when the app gets ready, used on a request.
 */
const AJV_PROBE = (root: string) => `
import { lazyValidators } from ${JSON.stringify(join(root, 'src/http/lazy-validators.ts'))};
import { lazySerializers } from ${JSON.stringify(join(root, 'src/http/lazy-serializers.ts'))};
const report = { atStart: globalThis.ajvLoaded === true };
const validators = lazyValidators()({}, { customOptions: {}, plugins: [] });
const validate = validators({ schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] }, httpPart: 'body', method: 'POST', url: '/x' });
report.afterReady = globalThis.ajvLoaded === true;
const serializers = lazySerializers()({}, {});
const plain = serializers({ schema: { type: 'object', properties: { a: { type: 'string' } } }, method: 'GET', url: '/p', httpStatus: '200' });
report.plain = plain({ a: 'x', b: 1 });
report.afterPlain = globalThis.ajvLoaded === true;
// anyOf of objects: fast-json-stringify picks the branch with its Validator (Ajv).
const union = serializers({ schema: { anyOf: [
  { type: 'object', properties: { kind: { const: 'a' }, a: { type: 'number' } }, required: ['kind', 'a'] },
  { type: 'object', properties: { kind: { const: 'b' }, b: { type: 'string' } }, required: ['kind', 'b'] },
] }, method: 'GET', url: '/u', httpStatus: '200' });
report.union = [union({ kind: 'a', a: 1, b: 'no' }), union({ kind: 'b', b: 'x', a: 2 })];
report.afterUnion = globalThis.ajvLoaded === true;
report.valid = [validate({ n: 1 }), validate({ n: 'x' })];
report.error = validate.errors?.[0]?.message;
console.log(JSON.stringify(report));
`;

test('Ajv is loaded by the first response schema or request check that needs it, not by the start', async (t) => {
  const dir = await tempDir(t, 'gantry-lazy-ajv-');
  await writeFile(join(dir, 'probe.js'), AJV_PROBE(ROOT));
  const markAjv = {
    name: 'mark-ajv',
    setup(build: esbuild.PluginBuild) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]ajv[\\/]dist[\\/]ajv\.js$/ }, async (args) => ({
        contents: `globalThis.ajvLoaded = true;\n${await readFile(args.path, 'utf8')}`, loader: 'js',
      }));
    },
  };
  await bundleProbe(dir, [lazyAjv, markAjv]);
  const { stdout } = await promisify(execFile)(process.execPath, [join(dir, 'probe.bundle.mjs')]);
  const report = JSON.parse(stdout);
  assert.deepEqual([report.atStart, report.afterReady, report.afterPlain], [false, false, false], 'Ajv evaluated before anything needed it');
  assert.equal(report.plain, '{"a":"x"}');
  assert.deepEqual(report.union, ['{"kind":"a","a":1}', '{"kind":"b","b":"x"}']);
  assert.equal(report.afterUnion, true, 'the marker sees Ajv once it is used');
  assert.deepEqual(report.valid, [true, false]);
  assert.match(report.error, /integer/);
});
