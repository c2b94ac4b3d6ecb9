#!/usr/bin/env node
// Launcher for the `gantry` command: runs the server built into dist/ by `npm run build` with plain node, no TypeScript loader.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('gantry: the server is not built (dist/cli.js is missing): run `npm run build` in the checkout\n');
  process.exit(1);
}
// Stack traces in logs then name src/*.ts lines; the maps are read only when a trace is formatted.
process.setSourceMapsEnabled(true);
await import(cli.href);
