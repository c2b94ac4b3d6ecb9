// Test helper: a real Gantry on an ephemeral port with a fresh temp base dir, plus small HTTP helpers.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startGantry, type Gantry, type StartOptions } from '../../src/main.ts';
import { installWireCheck, wireMismatches } from './wire-check.ts';

// Every answer of every test server is checked against its route's response schema.
installWireCheck();

export interface TestServer extends Gantry {
  baseDir: string;
  /** The global API key (created on first run). */
  apiKey: string;
  /** fetch against the server with the global API key unless `headers` says otherwise. */
  api(path: string, init?: RequestInit & { json?: unknown; key?: string | null }): Promise<Response>;
}

export async function startTestServer(
  t: TestContext | undefined,
  opts: Partial<StartOptions> & { settings?: Record<string, unknown> } = {},
): Promise<TestServer> {
  const baseDir = opts.baseDir ?? (await mkdtemp(join(tmpdir(), 'gantry-test-')));
  const originalWrite = process.stdout.write.bind(process.stdout);
  // The first-run banner goes to stdout; keep test output clean.
  process.stdout.write = (() => true) as typeof process.stdout.write;
  let g: Gantry;
  try {
    g = await startGantry({ host: '127.0.0.1', port: 0, ...opts, baseDir });
  } finally {
    process.stdout.write = originalWrite;
  }
  const apiKey = g.config.current.api.key ?? '';
  const server: TestServer = {
    ...g,
    baseDir,
    apiKey,
    api(path, init = {}) {
      const headers = new Headers(init.headers);
      const key = init.key === undefined ? apiKey : init.key;
      if (key !== null && !headers.has('X-Api-Key')) headers.set('X-Api-Key', key);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('Content-Type', 'application/json');
        body = JSON.stringify(init.json);
      }
      return fetch(g.url + path, { ...init, headers, body });
    },
  };
  t?.after(async () => {
    const mismatches = wireMismatches(g.app);
    await g.stop();
    // Retried: a write the stopped server had already started (metadata of a failed transfer) may land during removal.
    if (!opts.baseDir) await rm(baseDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    assert.deepEqual(mismatches, [], 'a response schema changed what the handler answered');
  });
  return server;
}
