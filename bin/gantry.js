#!/usr/bin/env node
// Launcher for the `gantry` command: runs the server built into dist/ by `npm run build` with plain node, no TypeScript loader.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { setFlagsFromString } from 'node:v8';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('gantry: the server is not built (dist/cli.js is missing): run `npm run build` in the checkout\n');
  process.exit(1);
}
// Sized for a small board: V8 favours memory over peak speed (a young generation of at most a few MB instead of up
// to 32 MB kept after any allocation burst, smaller compiled code): ≈ 13 MB less idle RSS (bench/memory.ts). Set at
// run time, before anything allocates much, so `node bin/gantry.js`, the systemd unit and `npm start` all get it.
// GANTRY_V8_FLAGS replaces the list (empty: V8's defaults). Heap sizes (--max-semi-space-size, --max-old-space-size)
// are fixed when V8 starts and only work on node's command line or in NODE_OPTIONS.
const V8_FLAGS = process.env.GANTRY_V8_FLAGS ?? '--optimize-for-size';
for (const flag of V8_FLAGS.split(/\s+/).filter(Boolean)) setFlagsFromString(flag);
// Node ≥ 22.1 keeps compiled code of dist/ on disk between starts (a faster start); older Nodes lack the call.
module.enableCompileCache?.();
// Stack traces in logs then name src/*.ts lines; costs ≈ 3 MB (Node parses each bundle's map when it loads it).
process.setSourceMapsEnabled(true);
await import(cli.href);
