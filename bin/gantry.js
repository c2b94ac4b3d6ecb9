#!/usr/bin/env node
// Launcher for the `gantry` command: runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli.ts');
