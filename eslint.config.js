// Lint rules for the server, tests and benchmarks (the web UI has its own build).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import regexp from 'eslint-plugin-regexp';
import { readdirSync } from 'node:fs';

// The layering, executable (issue #16): which other top folders of src/ each folder may import. Every folder may
// import its own files; nothing imports src/main.ts (the composition root) except src/cli.ts, which is unrestricted
// like main.ts. Each folder's README.md says the same in prose — change both together.
const BOTTOM = ['core', 'config', 'gcode', 'protocol'];
const DOMAIN = ['objects', 'access', 'files', 'system', 'event-actions', 'printer', 'slicing', 'timelapse', 'mqtt', 'recovery', 'import', 'notifications', 'bed-mesh', 'power', 'layer-progress', 'spools', 'queue'];
const MAY_IMPORT = {
  core: [],
  config: ['core'],
  gcode: ['core'],
  protocol: ['core', 'gcode'],
  'virtual-printer': ['core', 'gcode'],
  transports: ['core', 'config', 'gcode', 'protocol', 'virtual-printer'],
  // Domain services: the bottom layers, and the few services whose types or functions they build on (no cycles).
  // Object labels and the host-side object skip (pure): the analysis (files/) and the job streamer (printer/) use them.
  objects: BOTTOM,
  access: BOTTOM,
  files: [...BOTTOM, 'objects'],
  system: BOTTOM,
  'event-actions': BOTTOM,
  printer: [...BOTTOM, 'files', 'objects'],
  slicing: [...BOTTOM, 'files', 'printer'],
  timelapse: [...BOTTOM, 'printer'],
  mqtt: [...BOTTOM, 'printer'],
  recovery: [...BOTTOM, 'files', 'printer'],
  power: [...BOTTOM, 'files', 'printer'],
  'layer-progress': [...BOTTOM, 'files', 'printer'],
  import: [...BOTTOM, 'access', 'files', 'printer', 'slicing', 'system'],
  // The notifier reuses the timelapse's camera snapshot fetch; the print arrives as a progress function from main.ts.
  notifications: [...BOTTOM, 'timelapse'],
  'bed-mesh': [...BOTTOM, 'printer'],
  // Spoolman: the job's file position and the printer's host words arrive as functions from main.ts.
  spools: [...BOTTOM, 'printer'],
  // The farm's print queue sees printers through its own interface (queue-printers.ts), the library's analysis types only.
  queue: [...BOTTOM, 'files'],
  // The edge. octoprint/ is the OctoPrint wire vocabulary shared by http/ and push/ (if it lives in http/vocabulary/
  // instead, push/ may import that one subfolder of http/).
  octoprint: [...BOTTOM, ...DOMAIN],
  http: [...BOTTOM, ...DOMAIN, 'octoprint'],
  push: [...BOTTOM, ...DOMAIN, 'octoprint', 'http/vocabulary'],
  // Moonraker's API (Mainsail, Fluidd): an edge beside http/ and push/, on the same services, using neither's internals.
  moonraker: [...BOTTOM, ...DOMAIN, 'octoprint'],
  // A printer as one unit and the farm of them: composes a printer's domain services and its push and MQTT views
  // (below main.ts, which builds the shared services and the HTTP app around them).
  farm: [...BOTTOM, ...DOMAIN, 'octoprint', 'push'],
};
const FOLDERS = Object.keys(MAY_IMPORT);
// A new top folder without a row would be neither checked nor protected: lint stops until the table says where it sits.
const unlisted = readdirSync(new URL('./src/', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory() && !Object.hasOwn(MAY_IMPORT, d.name)).map((d) => `src/${d.name}/`);
if (unlisted.length > 0) throw new Error(`eslint.config.js: ${unlisted.join(', ')} missing from MAY_IMPORT (which folders may it import?)`);
// Libraries that are one folder's concrete choice: nobody else depends on them directly.
const OWNED_PACKAGES = {
  http: ['fastify', '@fastify/*'],
  push: ['sockjs', 'ws'],
  mqtt: ['mqtt'],
  transports: ['serialport', '@serialport/*'],
};
// Edges that also use another folder's library: the Moonraker edge mounts its HTTP mirror on the same Fastify app and
// serves its own websocket with ws.
const ALSO_USED_BY = { moonraker: ['fastify', '@fastify/*', 'ws'], spools: ['ws'] };
// protocol/ and gcode/ do no I/O: they are driven through interfaces (line-transport.ts) and tested without devices.
const IO_MODULES = ['fs', 'net', 'child_process', 'http', 'https', 'dgram', 'worker_threads'];

// TypeBox's `Type` and `Value` namespaces hold all of TypeBox, which the bundle then keeps: src/ takes the builders and
// value functions it uses from the one file that names them (types may still come from TypeBox itself).
const TYPEBOX_GATE = 'src/config/typebox.ts';
const TYPEBOX_MODULES = ['typebox', 'typebox/value'];

// A stream's reads allocate a Buffer per chunk, which piles up in malloc's heap until a GC: src/ reads files through
// src/core/file-chunks.ts (reused buffers, or a stream that frees what it sent). The archive extractor keeps its own
// stream (a rare admin action whose decompressor allocates anyway).
const THREAD_ROOT = 'src/printer/link/link-thread.ts';
const THREAD_ROOT_EXTRA = ['transports', 'virtual-printer'];

const FILE_READERS = ['src/core/file-chunks.ts', 'src/system/archive-extract.ts'];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
function boundaryRule(folder, { typeboxGate = false, fileReader = false, extra = [] } = {}) {
  const allowed = [...MAY_IMPORT[folder], ...extra];
  const forbidden = FOLDERS.filter((f) => f !== folder && !allowed.includes(f));
  // A relative specifier whose first folder after the `../` chain is a forbidden top folder of src/.
  const sub = allowed.filter((a) => a.includes('/')).map((a) => a.split('/'));
  const partly = sub.map(([top, rest]) => `${escape(top)}/(?!${escape(rest)}/)`);
  const targets = [...forbidden.filter((f) => !sub.some(([top]) => top === f)).map((f) => `${escape(f)}/`), ...partly, '(main|cli)\\.ts$'];
  const regex = `^(\\.{1,2}/)+(${targets.join('|')})`;
  const message = `src/${folder}/ may import only ${allowed.length ? allowed.join(', ') : 'no other folder of src/'} (src/${folder}/README.md).`;
  const patterns = [{ regex, caseSensitive: true, message }];
  const packages = Object.entries(OWNED_PACKAGES).filter(([owner]) => owner !== folder).flatMap(([owner, names]) =>
    names.map((name) => ({ name, owner }))).filter(({ name }) => !(ALSO_USED_BY[folder] ?? []).includes(name));
  const paths = packages.filter((p) => !p.name.includes('*')).map(({ name, owner }) => ({ name, message: `${name} is used only in src/${owner}/.` }));
  for (const { name, owner } of packages.filter((p) => p.name.includes('*'))) patterns.push({ group: [name], message: `${name} is used only in src/${owner}/.` });
  if (!typeboxGate) {
    for (const name of TYPEBOX_MODULES) paths.push({ name, allowTypeImports: true, message: `src/ takes TypeBox's builders and value functions from ${TYPEBOX_GATE}.` });
  }
  if (!fileReader) {
    for (const name of ['fs', 'node:fs']) paths.push({ name, importNames: ['createReadStream'], message: `src/ reads files through ${FILE_READERS[0]}.` });
  }
  if (folder === 'protocol' || folder === 'gcode') {
    for (const m of IO_MODULES) paths.push({ name: m, message: `src/${folder}/ does no I/O.` }, { name: `node:${m}`, message: `src/${folder}/ does no I/O.` });
    patterns.push({ group: ['fs/*', 'node:fs/*'], message: `src/${folder}/ does no I/O.` });
  }
  // no-restricted-imports does not see import(): the same folder rule for dynamic imports (esquery regexes cannot hold `/`).
  const dynamic = { selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\x2F')}/]`, message };
  return { files: [`src/${folder}/**`], rules: { 'no-restricted-imports': ['error', { paths, patterns }], 'no-restricted-syntax': ['error', dynamic] } };
}

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'web/dist/', 'coverage/', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // The server reads text from outside (firmware lines, uploads, headers, form fields) with regular expressions; one
    // that backtracks read a 16 KB firmware line for seconds, an upload's path for 88 s. These two rules refuse an
    // expression whose time can grow faster than its input, within one start (backtracking) or over the starts a search
    // tries (move). The UI is held to the same: it reads paths and names it is given. They see literal expressions
    // only: one built with `new RegExp` needs the same care by hand.
    files: ['src/**', 'web/src/**'],
    plugins: { regexp },
    rules: {
      'regexp/no-super-linear-backtracking': 'error',
      'regexp/no-super-linear-move': ['error', { ignoreSticky: false, ignorePartial: false }],
    },
  },
  ...FOLDERS.map((folder) => boundaryRule(folder)),
  { ...boundaryRule('config', { typeboxGate: true }), files: [TYPEBOX_GATE] },
  ...FILE_READERS.map((file) => ({ ...boundaryRule(file.split('/')[1], { fileReader: true }), files: [file] })),
  // The printer link thread's composition root (main.ts's counterpart for that thread) makes the thread's transports:
  // the one file of printer/ that may import transports/ and virtual-printer/. Nothing imports it; main.ts starts it by path.
  { ...boundaryRule('printer', { extra: THREAD_ROOT_EXTRA }), files: [THREAD_ROOT] },
  {
    // The browser UI talks to the server only through the public HTTP and push API.
    files: ['web/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '^(\\.\\./)+src/', message: 'web/ uses the public API only, never the server\'s src/.' }] }],
    },
  },
);
