// Test helper: a real Gantry on an ephemeral port with a fresh temp base dir, plus small HTTP helpers.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { parse, stringify } from 'yaml';
import { startGantry, type Gantry, type StartOptions } from '../../src/main.ts';
import { generateApiKey } from '../../src/access/keys.ts';
import { installWireCheck, wireMismatches } from './wire-check.ts';

/** Starts Gantry with stdout silenced (the first-run banner goes there). */
async function startQuietly(opts: StartOptions): Promise<Gantry> {
  const originalWrite = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    return await startGantry(opts);
  } finally {
    process.stdout.write = originalWrite;
  }
}

/**
 * What a first start leaves (config.yaml and users.yaml), from one real first start per process. A first start hashes
 * the new admin's password (scrypt, ~0.1 s of CPU) and saves config.yaml four times; servers whose test is not about
 * the first start begin from a copy instead, with their own global key, secret key and installation id.
 */
let firstStart: Promise<{ config: Record<string, Record<string, unknown>>; users: string }> | undefined;

async function seedAsAfterFirstStart(baseDir: string): Promise<void> {
  firstStart ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-first-start-'));
    try {
      const g = await startQuietly({ host: '127.0.0.1', port: 0, baseDir: dir });
      await g.stop();
      return {
        config: parse(await readFile(g.paths.config, 'utf8')) as Record<string, Record<string, unknown>>,
        users: await readFile(g.paths.users, 'utf8'),
      };
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    }
  })();
  const { config, users } = await firstStart;
  const own = {
    ...config,
    server: { ...config.server, uuid: randomUUID(), secretKey: randomBytes(32).toString('base64url') },
    api: { ...config.api, key: generateApiKey() },
  };
  await writeFile(join(baseDir, 'config.yaml'), stringify(own), { mode: 0o600 });
  await writeFile(join(baseDir, 'users.yaml'), users, { mode: 0o600 });
}

/** Settings that change what a first start does (no admin with access control off, a given key): those start fresh. */
const FIRST_START_SECTIONS = ['accessControl', 'api', 'server'];

// Every answer of every test server is checked against its route's response schema.
installWireCheck();

export interface TestServer extends Gantry {
  baseDir: string;
  /** The global API key (created on first run). */
  apiKey: string;
  /** fetch against the server with the global API key unless `headers` says otherwise. */
  api(path: string, init?: RequestInit & { json?: unknown; key?: string | null }): Promise<Response>;
}

/**
 * A new base dir starts as a first start leaves it (see seedAsAfterFirstStart) unless `fresh` is set or the settings
 * touch what a first start does; `baseDir` starts on an existing one as it is.
 */
export async function startTestServer(
  t: TestContext | undefined,
  opts: Partial<StartOptions> & { settings?: Record<string, unknown>; fresh?: boolean } = {},
): Promise<TestServer> {
  const { fresh, ...startOpts } = opts;
  const baseDir = opts.baseDir ?? (await mkdtemp(join(tmpdir(), 'gantry-test-')));
  if (!opts.baseDir && !fresh && !FIRST_START_SECTIONS.some((k) => opts.settings && k in opts.settings)) await seedAsAfterFirstStart(baseDir);
  const g = await startQuietly({ host: '127.0.0.1', port: 0, ...startOpts, baseDir });
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
