// Builds the server into plain JavaScript in dist/ (cli.js and the analysis worker), so a running Gantry needs no TypeScript loader.
// Usage: node scripts/build.mjs [--if-stale]   (`--if-stale` skips the build when dist/ is newer than its inputs)
// Plain JavaScript itself: `npm start` runs it with node before the server, without tsx.
import { copyFile, mkdir, readFile, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const SRC = join(ROOT, 'src/');
/** Everything whose change must rebuild dist/; package.json because the dependency list decides what stays external. */
const INPUTS = ['src', 'package.json', 'scripts/build.mjs'];
/** The files whose presence (and age) stand for a complete build. */
export const OUTPUTS = ['cli.js', 'analysis-worker.js', 'link-worker.js'];
/**
 * Not bundled (see buildServer); ws's optional native helpers are looked up with try/require; re2js is required on
 * first use (push/subscription.ts), synchronously, which needs a module of its own.
 */
const EXTERNAL = ['serialport', '@serialport/*', '@node-rs/argon2', 'sockjs', 'esbuild', 'tsx', 'bufferutil', 'utf-8-validate', 're2js'];

async function newestMtime(path) {
  const s = await stat(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let newest = s.mtimeMs;
  for (const name of await readdir(path)) newest = Math.max(newest, await newestMtime(join(path, name)));
  return newest;
}

export async function serverIsStale() {
  let built = Infinity;
  try {
    for (const out of OUTPUTS) built = Math.min(built, (await stat(join(DIST, out))).mtimeMs);
  } catch {
    return true;
  }
  for (const input of INPUTS) if ((await newestMtime(join(ROOT, input))) > built) return true;
  return false;
}

/**
 * Bundles src/cli.ts (with everything it imports, main.ts and the dependencies included) and the analysis worker's
 * entry into ES modules, then rewrites each as CommonJS (asCommonJs, below). Dependencies are bundled too: one file
 * instead of ~600 in node_modules cut start-up (module resolution, stat and compile of each file) and ~20 MB of idle
 * RSS (bench/memory.ts). What stays external:
 * native modules (serialport, argon2: their .node binaries are found relative to their own package), sockjs
 * (push/transports.ts patches its transport module through require, which must be the instance sockjs itself uses),
 * and what only tests or development load. Dynamic imports become their own chunks (code splitting), loaded when
 * first used. Whitespace is minified (names are kept, so stack traces still name functions; the linked source
 * maps lead back to src/): V8 keeps every module's source text in memory, and comments with non-ASCII characters
 * made the text two bytes a character.
 * Each output file is written beside its final name and renamed into place, so a build racing another one (tests
 * in parallel) or a server starting meanwhile never reads half a file. Chunks of earlier builds are removed.
 */
/**
 * @fastify/static requires glob (≈ 100 KB) at load time but calls it only for `wildcard: false`, which Gantry never
 * sets; it gets a stand-in that loads glob on the first call (its calls are async), so the code stays out of start-up.
 */
const lazyGlob = {
  name: 'lazy-glob',
  setup(build) {
    build.onResolve({ filter: /^glob$/ }, (args) => (/[\\/]@fastify[\\/]static[\\/]/.test(args.importer)
      ? { path: 'glob', namespace: 'lazy-glob', pluginData: { resolveDir: args.resolveDir } } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'lazy-glob' }, (args) => ({
      contents: "export async function glob(...args) { return (await import('glob')).glob(...args); }",
      resolveDir: args.pluginData.resolveDir,
      loader: 'js',
    }));
  },
};

/**
 * Ajv (with ajv-formats, fast-uri and its JTD parts) was loaded and evaluated at every start by fast-json-stringify,
 * which needs it only for response schemas with anyOf or if/then (its Validator; the first answers of a start have
 * none), and by Fastify's request-validator compiler, which src/http/lazy-validators.ts calls from a route's first
 * validated request on. Both get stand-ins that load the real module on first use.
 */
export const lazyAjv = {
  name: 'lazy-ajv',
  setup(build) {
    build.onResolve({ filter: /^\.\/lib\/validator$/ }, (args) => (/[\\/]fast-json-stringify[\\/]index\.js$/.test(args.importer)
      ? { path: join(dirname(args.importer), 'lib', 'validator.js'), namespace: 'lazy-fjs-validator' } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'lazy-fjs-validator' }, async (args) => {
      // The class, its static methods and the module's other exports (functions: escapeRefForAjv), each forwarded.
      const source = await readFile(args.path, 'utf8');
      if (!/^module\.exports = Validator$/m.test(source)) throw new Error(`${args.path}: no longer exports the Validator class`);
      const names = [...source.matchAll(/^ {2}static (\w+) \(/gm), ...source.matchAll(/^module\.exports\.(\w+) = /gm)].map((m) => m[1]);
      return {
        contents: [
          'let real;',
          `const load = () => (real ??= require(${JSON.stringify(args.path)}));`,
          'module.exports = function Validator(...args) { return new (load())(...args); };',
          ...names.map((n) => `module.exports.${n} = (...args) => load().${n}(...args);`),
        ].join('\n'),
        loader: 'js',
        resolveDir: dirname(args.path),
      };
    });
    build.onResolve({ filter: /^@fastify\/ajv-compiler$/ }, (args) => (args.importer.startsWith(SRC)
      ? { path: '@fastify/ajv-compiler', namespace: 'lazy-ajv-compiler', pluginData: { resolveDir: args.resolveDir } } : undefined));
    build.onLoad({ filter: /.*/, namespace: 'lazy-ajv-compiler' }, (args) => ({
      contents: "let real;\nexport default function AjvCompiler(...args) { return (real ??= require('@fastify/ajv-compiler'))(...args); }",
      loader: 'js',
      resolveDir: args.pluginData.resolveDir,
    }));
  },
};

/**
 * TypeBox's format checkers (date-time, email, hostname with its IDNA rules, URI, …) build their regular expressions
 * when loaded, Unicode property classes among them (\\p{Script=Han} …), which fault in ICU's tables: ≈ 3 MB of idle RSS
 * (bench/memory.ts), for `format` keywords no Gantry schema uses. The format registry and its index get stand-ins
 * that load each checker on its first call (esbuild initialises a module reached through require() on that call).
 */
export const lazyFormatCheckers = {
  name: 'lazy-format-checkers',
  setup(build) {
    const formatDir = /[\\/]node_modules[\\/]typebox[\\/]build[\\/]format$/;
    build.onResolve({ filter: /^\.\/[\w-]+\.mjs$/ }, (args) => {
      if (args.namespace !== 'file' || !formatDir.test(dirname(args.importer))) return undefined;
      const path = join(dirname(args.importer), args.path);
      return /[\\/](?:_registry|format|index)\.mjs$/.test(path) ? undefined : { path, namespace: 'lazy-format-checker' };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-format-checker' }, async (args) => {
      const names = [...(await readFile(args.path, 'utf8')).matchAll(/^export function (\w+)/gm)].map((m) => m[1]);
      if (names.length === 0) throw new Error(`${args.path}: no exported checker function`);
      const real = JSON.stringify(args.path);
      const lines = ['let checker;', ...names.map((n) => `export function ${n}(...args) { return (checker ??= require(${real})).${n}(...args); }`)];
      return { contents: lines.join('\n'), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

/**
 * Node's built-in modules are taken through require() even where the sources import them. An ES import of a built-in
 * makes Node build the module's ES facade, which reads every export: on Node 24 that loads undici (the fetch
 * implementation, behind node:http's WebSocket getter) and webcrypto (behind node:crypto's), ≈ 50 ms of start and
 * memory an idle server never uses. Bundled CommonJS dependencies already reach built-ins this way.
 * The stand-in is an ES module exporting just the names src/ imports (found by scanning src/, see builtinImports):
 * as a CommonJS stand-in, every importing file got its own copy of the whole module object, one getter closure per
 * export (esbuild's __toESM): ≈ 8,000 closures, ≈ 1 MB of idle heap. A name the scan missed fails the build
 * ("No matching export"); a namespace import (`import * as`) keeps the CommonJS stand-in for that module.
 */
function builtinsViaRequire(imports) {
  return {
    name: 'builtins-via-require',
    setup(build) {
      // ES dependencies (rotating-file-stream, glob, tar) import other names: they get the CommonJS stand-in.
      build.onResolve({ filter: /^[a-z:_/]+$/ }, (args) => (args.kind === 'import-statement' && isBuiltin(args.path)
        ? { path: args.path.replace(/^node:/, ''), namespace: args.importer.startsWith(SRC) ? 'builtin-via-require' : 'builtin-cjs' } : undefined));
      build.onLoad({ filter: /.*/, namespace: 'builtin-cjs' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(`node:${args.path}`)});`, loader: 'js' }));
      build.onLoad({ filter: /.*/, namespace: 'builtin-via-require' }, (args) => {
        const req = `require(${JSON.stringify(`node:${args.path}`)})`;
        const names = imports.get(args.path);
        if (!names || names.has('*')) return { contents: `module.exports = ${req};`, loader: 'js' };
        // Each name is read where it is exported, once: the getters behind names nobody imports stay untouched.
        const named = [...names].filter((n) => n !== 'default').map((n) => `export const ${n} = m.${n};`);
        return { contents: [`const m = ${req};`, 'export default m;', ...named].join('\n'), loader: 'js' };
      });
    },
  };
}

/**
 * Built-ins an idle server never calls, loaded on first use instead of at start. Fastify requires https and http2 at
 * load (for its `https`/`http2` options, which Gantry never sets), the log rotation zlib and child_process, and src/
 * spawns processes, sends HTTPS snapshots and resolves names only on request: loading them cost ≈ 3 MB of idle RSS
 * (Node 22: 65.3 → 62.3 MB 15 s after start, bench/memory.ts) in compiled module code and the node binary's pages of
 * their sources and of OpenSSL's TLS set-up. perf_hooks stays eager (Fastify calls performance.now() per request), and
 * so do worker_threads (the link thread posts every line through it) and assert (a function: sonic-boom calls it).
 */
export const LAZY_BUILTINS = new Set(['child_process', 'dgram', 'dns', 'dns/promises', 'http2', 'https', 'readline', 'tls', 'vm', 'zlib']);

/**
 * Each lazy built-in becomes an ES module exporting, for every export of the real one (as the building Node has them),
 * a stand-in that requires the module on first use: a callable stand-in for functions and classes (call, `new`,
 * static properties, instanceof), an object stand-in for objects (methods come bound to the real object, for their
 * brand checks), the value itself for primitives (constants). Unused stand-ins are dropped by tree shaking; CommonJS
 * dependencies that require() the module get the same stand-ins as properties.
 */
const LAZY_RUNTIME = `
export function lazyValue(get, callable) {
  let real;
  const load = () => (real ??= get());
  let bound;
  const proxy = new Proxy(callable ? function () {} : {}, {
    get(_, key) {
      const value = Reflect.get(load(), key);
      if (callable || typeof value !== 'function') return value;
      bound ??= new WeakMap();
      let b = bound.get(value);
      if (!b) bound.set(value, (b = value.bind(load())));
      return b;
    },
    set: (_, key, value) => Reflect.set(load(), key, value),
    has: (_, key) => Reflect.has(load(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(load()),
    apply: (_, thisArg, args) => Reflect.apply(load(), thisArg, args),
    construct: (_, args, newTarget) => Reflect.construct(load(), args, newTarget === proxy ? load() : newTarget),
  });
  return proxy;
}`;

export function lazyBuiltins() {
  const require = createRequire(import.meta.url);
  return {
    name: 'lazy-builtins',
    setup(build) {
      build.onResolve({ filter: /^lazy-builtin-runtime$/ }, () => ({ path: 'runtime', namespace: 'lazy-builtin-runtime' }));
      build.onLoad({ filter: /.*/, namespace: 'lazy-builtin-runtime' }, () => ({ contents: LAZY_RUNTIME, loader: 'js' }));
      build.onResolve({ filter: /^[a-z:_/0-9]+$/ }, (args) => {
        if (args.namespace === 'lazy-builtin') return undefined; // the stand-in's own require of the real module
        const name = args.path.replace(/^node:/, '');
        return isBuiltin(args.path) && LAZY_BUILTINS.has(name) ? { path: name, namespace: 'lazy-builtin' } : undefined;
      });
      build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => {
        const real = require(`node:${args.path}`);
        if (typeof real !== 'object') throw new Error(`lazy built-in ${args.path} is not an object of exports`);
        const load = `() => require(${JSON.stringify(`node:${args.path}`)})`;
        const lines = ["import { lazyValue } from 'lazy-builtin-runtime';", `const load = ${load};`, 'export default /* @__PURE__ */ lazyValue(load, false);'];
        for (const key of Object.keys(real)) {
          if (!/^[A-Za-z_$][\w$]*$/.test(key) || key === 'default') continue;
          const value = real[key];
          if (typeof value === 'function' || (typeof value === 'object' && value !== null)) {
            lines.push(`export const ${key} = /* @__PURE__ */ lazyValue(() => load().${key}, ${typeof value === 'function'});`);
          } else if (value !== undefined) {
            lines.push(`export const ${key} = ${JSON.stringify(value)};`);
          }
        }
        return { contents: lines.join('\n'), loader: 'js', resolveDir: ROOT };
      });
    },
  };
}

/**
 * Dependencies' local names are shortened (a function's own variables and inner functions; names at a file's top level
 * stay, so Fastify's, ajv's and pino's functions keep their names in stack traces, and src/ is left whole): V8 keeps
 * every module's source text, ≈ 200 KB less of it, and shorter names in each compiled function's scope information:
 * idle RSS ≈ 0.6 MB lower (Node 24: 64.4 → 63.7 MB, bench/memory.ts).
 */
const minifyDependencies = {
  name: 'minify-dependencies',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.(?:c?js|mjs)$/ }, async (args) => {
      const { transform } = await import('esbuild');
      const code = await readFile(args.path, 'utf8');
      // The inline map lets the bundle's source map lead to the dependency's own lines.
      const out = await transform(code, { loader: 'js', minifyIdentifiers: true, sourcefile: args.path, sourcemap: 'inline', sourcesContent: false, logLevel: 'silent' });
      return { contents: out.code, loader: 'js' };
    });
  },
};

/** Built-in module (without `node:`) → the names src/ imports from it (`default`, or `*` for a namespace import). */
async function builtinImports(dir, out = new Map()) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await builtinImports(path, out);
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const text = await readFile(path, 'utf8');
    for (const m of text.matchAll(/^import\s+(?!type\s)([^'";]*?)\s+from\s+'([a-z:_/]+)'/gm)) {
      const builtin = m[2].replace(/^node:/, '');
      if (!isBuiltin(builtin)) continue;
      const names = out.get(builtin) ?? new Set();
      out.set(builtin, names);
      const clause = m[1];
      if (/^\*\s+as\s/.test(clause)) names.add('*');
      else if (/^[\w$]+/.test(clause)) names.add('default');
      for (const spec of /\{([^}]*)\}/.exec(clause)?.[1].split(',') ?? []) {
        const name = spec.trim().split(/\s+as\s+/)[0];
        if (name && !name.startsWith('type ')) names.add(name);
      }
    }
  }
  return out;
}

/**
 * The bundle's ES module files (entries and chunks) rewritten as CommonJS, one for one, names and source maps kept
 * (esbuild splits code into chunks only for ES modules, hence two passes). A CommonJS file is compiled by V8 as a
 * script, and a script's V8 code cache can be made after it ran, holding every function the start compiled; Node's
 * loader makes an ES module's cache as it compiles it, before it runs: its top-level code only. bin/gantry.js keeps
 * such caches of dist/. What the ES modules had, the files keep: strict mode, live bindings between chunks (getters on
 * `exports`), each chunk run once (Node's require cache); `import()` of a chunk becomes a require() of it in a
 * promise, and `import.meta.url` the file's URL.
 */
async function asCommonJs(esbuild, esmFiles) {
  const sources = new Map(esmFiles.filter((f) => f.path.endsWith('.js')).map((f) => [f.path, f.text]));
  const maps = new Map(esmFiles.filter((f) => f.path.endsWith('.js.map')).map((f) => [f.path.slice(0, -'.map'.length), f.text]));
  // The first pass's source maps go in inline, so that the second pass's maps lead back to src/ and node_modules/.
  const esmBundleFiles = {
    name: 'esm-bundle-files',
    setup(build) {
      build.onResolve({ filter: /.*/ }, (args) => (sources.has(args.path) ? { path: args.path } : undefined));
      build.onLoad({ filter: /\.js$/ }, (args) => {
        const code = sources.get(args.path).replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
        const map = Buffer.from(maps.get(args.path)).toString('base64');
        return { contents: `${code}//# sourceMappingURL=data:application/json;base64,${map}\n`, loader: 'js', resolveDir: DIST };
      });
    },
  };
  const out = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [...sources.keys()],
    outdir: DIST,
    outbase: DIST,
    bundle: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__gantryModuleUrl' },
    banner: { js: '"use strict";var __gantryModuleUrl=require("node:url").pathToFileURL(__filename).href;' },
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    plugins: [esmBundleFiles],
    write: false,
    logLevel: 'warning',
  });
  const made = new Set(out.outputFiles.map((f) => f.path));
  for (const path of sources.keys()) if (!made.has(path)) throw new Error(`the CommonJS pass made no ${path}`);
  return out.outputFiles;
}

export async function buildServer(opts = {}) {
  if (opts.ifStale && !(await serverIsStale())) return false;
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { cli: 'src/cli.ts', 'analysis-worker': 'src/files/analysis/worker.ts', 'link-worker': 'src/printer/link/link-thread.ts' },
    outdir: DIST,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    plugins: [lazyGlob, lazyFormatCheckers, lazyAjv, lazyBuiltins(), minifyDependencies, builtinsViaRequire(await builtinImports(SRC))],
    write: false,
    logLevel: 'warning',
  });
  await mkdir(DIST, { recursive: true });
  const outputFiles = await asCommonJs(esbuild, out.outputFiles);
  // dist/ holds CommonJS (the package itself is ES modules): node and worker threads load its files as such.
  outputFiles.push({ path: join(DIST, 'package.json'), contents: new TextEncoder().encode('{ "type": "commonjs" }\n') });
  // Maps first: a finished .js file must never point at a map that is not there yet.
  const files = [...outputFiles].sort((a, b) => Number(b.path.endsWith('.map')) - Number(a.path.endsWith('.map')));
  for (const file of files) {
    const tmp = `${file.path}.${process.pid}.tmp`;
    await writeFile(tmp, file.contents);
    await rename(tmp, file.path);
  }
  // Files the code finds beside itself through import.meta.url (the timelapse watermark): in dist/ that is dist/assets/.
  await mkdir(join(DIST, 'assets'), { recursive: true });
  for (const name of await readdir(join(ROOT, 'src/timelapse/assets'))) {
    const to = join(DIST, 'assets', name);
    await copyFile(join(ROOT, 'src/timelapse/assets', name), `${to}.${process.pid}.tmp`);
    await rename(`${to}.${process.pid}.tmp`, to);
  }
  // Chunks an earlier build left; a chunk written in the last minute may belong to a build running beside this one.
  const current = new Set(files.map((f) => f.path));
  for (const name of await readdir(DIST)) {
    const path = join(DIST, name);
    if (!/^chunk-\w+\.js(\.map)?$/.test(name) || current.has(path)) continue;
    const s = await stat(path).catch(() => null);
    if (s && Date.now() - s.mtimeMs > 60_000) await unlink(path).catch(() => {});
  }
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildServer({ ifStale: process.argv.includes('--if-stale') }).then((built) => {
    console.log(built ? 'server built into dist/' : 'server build is up to date');
  }, (err) => {
    console.error('building the server failed:', err?.message ?? err);
    process.exit(1);
  });
}
