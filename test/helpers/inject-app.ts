// Test helper: the Fastify app built with buildApp and driven through app.inject — real config, access and printer
// profiles on a temp dir, a recording fake for the printer side (printer, ports, jobs), no socket, no printer link.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { buildApp, type AppServices } from '../../src/http/app.ts';
import type { GantryApp } from '../../src/http/types.ts';
import { ConfigStore } from '../../src/config/config-store.ts';
import { createFolders, resolvePaths, type Paths } from '../../src/config/paths.ts';
import { EventBus } from '../../src/core/event-bus.ts';
import { systemClock } from '../../src/core/clock.ts';
import { AccessService } from '../../src/access/access-service.ts';
import { PrinterProfiles } from '../../src/printer/profiles/printer-profiles.ts';
import { builtinDefaultProfile } from '../../src/printer/profiles/printer-profile-shape.ts';
import { stateFlags } from '../../src/printer/printer-state.ts';
import type { PortChoices, PrinterApi } from '../../src/printer/printer-service.ts';
import type { JobApi } from '../../src/http/routes/job.ts';
import type { JobInterruption, JobSnapshot } from '../../src/printer/job/job-types.ts';
import type { PrintHistoryEntry } from '../../src/printer/job/print-history.ts';
import { JobRunner } from '../../src/printer/job/job-runner.ts';
import type {
  ConnectOptions, ConnectionSnapshot, LinkProfile, Printer, PrinterStateSnapshot, TemperatureHistoryEntry, TemperatureSnapshot,
} from '../../src/printer/types.ts';
import { installWireCheck, wireMismatches } from './wire-check.ts';
import { tempDir } from './temp-dir.ts';

// Every answer is checked against its route's response schema, as on the real test servers.
installWireCheck();

/** One call a route made on a fake: method name and arguments. */
export type Call = [string, ...unknown[]];

/**
 * The printer as the routes see it (PrinterApi, so a route calling something new fails the type check here). Every
 * call is recorded in `calls` (in order); `commands()` and `clientCommands()` also append their lines to `lines`. State
 * is plain fields the test sets before a request. The members beyond PrinterApi are what the real JobRunner uses.
 */
export class FakePrinter implements PrinterApi {
  readonly calls: Call[] = [];
  readonly lines: string[] = [];
  operational = true;
  busy = false;
  temps: TemperatureSnapshot = {};
  history: TemperatureHistoryEntry[] = [];
  linkProfile: LinkProfile = builtinDefaultProfile();
  conn: ConnectionSnapshot = { state: 'Closed', port: null, baudrate: null, printerProfile: '_default' };
  /** Script names runScript knows (others answer false, as an unknown script does). */
  scripts = new Set<string>(['afterPrintCancelled']);
  /** The printer's last error text ('' for none). */
  error = '';
  /** An SD upload in progress, which a job cancel stops. */
  transferring = false;

  private record(name: string, ...args: unknown[]): void {
    this.calls.push([name, ...args]);
  }

  isOperational(): boolean { return this.operational; }
  isBusy(): boolean { return this.busy; }
  temperatures(): TemperatureSnapshot { return this.temps; }
  temperatureHistory(limit?: number): TemperatureHistoryEntry[] {
    return limit === undefined || limit < 0 ? this.history : this.history.slice(-limit);
  }
  profile(): LinkProfile { return this.linkProfile; }
  connection(): ConnectionSnapshot { return this.conn; }
  /** Busy reads as PRINTING (status GETs may then be shed by print-first under a saturated event loop). */
  state(): PrinterStateSnapshot {
    const id = !this.operational ? 'OFFLINE' : this.busy ? 'PRINTING' : 'OPERATIONAL';
    return { id, text: !this.operational ? 'Offline' : this.busy ? 'Printing' : 'Operational', error: this.error, flags: stateFlags(id, false) };
  }
  sdReady(): boolean { return false; }
  firmwareName(): string { return ''; }

  commands(lines: string[]): void { this.record('commands', lines); this.lines.push(...lines); }
  clientCommands(lines: string[]): void { this.record('clientCommands', lines); this.lines.push(...lines); }
  async runScript(name: string, context: Record<string, unknown>): Promise<boolean> {
    this.record('runScript', name, context);
    return this.scripts.has(name);
  }
  setTemperature(heater: string, target: number): void { this.record('setTemperature', heater, target); }
  setTemperatureOffsets(offsets: Record<string, number>): void { this.record('setTemperatureOffsets', offsets); }
  selectTool(tool: number): void { this.record('selectTool', tool); }
  extrude(amount: number, speed?: number): void { this.record('extrude', amount, speed); }
  flowRate(percent: number): void { this.record('flowRate', percent); }
  feedRate(percent: number): void { this.record('feedRate', percent); }
  jog(axes: object, opts: object): void { this.record('jog', axes, opts); }
  home(axes: string[]): void { this.record('home', axes); }
  sdInit(): void { this.record('sdInit'); }
  sdRefresh(): void { this.record('sdRefresh'); }
  sdRelease(): void { this.record('sdRelease'); }
  async connect(opts: ConnectOptions): Promise<void> { this.record('connect', opts); }
  async disconnect(): Promise<void> { this.record('disconnect'); }
  fakeAck(): void { this.record('fakeAck'); }
  cancelTransfer(): boolean { this.record('cancelTransfer'); return this.transferring; }
}

/** Port choices the connection routes offer and check against. */
export class FakePorts implements PortChoices {
  readonly calls: Call[] = [];
  ports = ['/dev/ttyUSB0', 'VIRTUAL'];
  rates = [250000, 115200];
  async listPorts(): Promise<string[]> { this.calls.push(['listPorts']); return this.ports; }
  baudrates(): number[] { return this.rates; }
}

/**
 * The job runner as the API uses it, with no file selected: `command` is recorded, and throws `commandError` when one
 * is set.
 */
export class FakeJobs implements JobApi {
  readonly calls: Call[] = [];
  commandError: Error | undefined;
  /** Prints the history route lists. */
  history: PrintHistoryEntry[] = [];
  async command(command: string, opts: { action?: string; user?: string } = {}): Promise<void> {
    this.calls.push(['command', command, opts]);
    if (this.commandError) throw this.commandError;
  }
  snapshot(): JobSnapshot {
    return { file: undefined, estimatedPrintTime: null, averagePrintTime: null, lastPrintTime: null, filament: null, user: null, progress: null };
  }
  interruption(): JobInterruption | null { return null; }
  stateText(): string { return 'Operational'; }
  async printHistory(): Promise<PrintHistoryEntry[]> { return this.history; }
}

/** A service the printer routes never use: any touch throws, so a test cannot lean on it by accident. */
function unused<T>(name: string): T {
  return new Proxy({}, { get: (_t, prop) => { throw new Error(`inject app: ${name}.${String(prop)} is not part of this test`); } }) as T;
}

export interface InjectApp {
  app: GantryApp;
  printer: FakePrinter;
  ports: FakePorts;
  jobs: FakeJobs;
  config: ConfigStore;
  printerProfiles: PrinterProfiles;
  access: AccessService;
  events: EventBus;
  paths: Paths;
  baseDir: string;
  /** The global API key (all permissions). */
  apiKey: string;
  /** A read-only user's API key (STATUS, no CONTROL/CONNECTION/PRINT). */
  readonlyKey: string;
  /** app.inject with the global key and JSON body; answers status and parsed body ('' for none). */
  request(method: 'GET' | 'POST', url: string, json?: unknown, key?: string): Promise<{ status: number; body: unknown }>;
  /**
   * The same call as TestServer.api (a fetch Response, the global key unless `key` says otherwise, null for none), made
   * through app.inject: a suite that only checks routes moves from a real server by changing how it starts.
   */
  api(path: string, init?: { method?: string; json?: unknown; body?: string; key?: string | null; headers?: Record<string, string> }): Promise<Response>;
}

/** The answer to a known key without the route's permission (not 'Invalid API key'). */
export const FORBIDDEN = { status: 403, body: { error: "You don't have the permission to access the requested resource. It is either read-protected or not readable by the server." } };

const API_KEY = 'INJECTGLOBALKEY0000000000000000000000000000';
const READONLY_KEY = 'INJECTREADONLYKEY00000000000000000000000000';

export interface InjectOptions {
  /**
   * /api/job answered by the real JobRunner over the fake printer (its refusals are the real texts) instead of
   * FakeJobs. Files, history and scripts are not given to it: only answers that need none of them can be asked for.
   */
  realJobRunner?: boolean;
}

export async function injectApp(t: TestContext, opts: InjectOptions = {}): Promise<InjectApp> {
  const baseDir = await tempDir(t, 'gantry-inject-');
  const paths = resolvePaths(baseDir);
  await createFolders(paths);
  // Users exist already, so the access service's first run (an admin and a scrypt hash) does not happen.
  await writeFile(paths.users, stringify({
    admin: { passwordHash: 'unused', groups: ['admins', 'users'] },
    viewer: { passwordHash: 'unused', groups: ['readonly'], apikey: READONLY_KEY },
  }));
  const config = await ConfigStore.load(paths.config);
  await config.patch({ api: { key: API_KEY }, server: { firstRun: false, secretKey: 'inject-secret' } });
  const logger = pino({ level: 'silent' });
  const events = new EventBus();
  const access = new AccessService(config.slice('accessControl', 'api', 'server'),
    { users: paths.users, groups: join(baseDir, 'groups.yaml'), appKeys: join(paths.data, 'appkeys', 'keys.yaml') }, systemClock, logger);
  await access.start();
  t.after(() => access.stop());
  const printerProfiles = new PrinterProfiles(paths.printerProfiles, config.slice('printerProfiles'), events, logger);
  await printerProfiles.start();
  t.after(() => printerProfiles.stop());

  const printer = new FakePrinter();
  const ports = new FakePorts();
  const jobs = new FakeJobs();
  // The real runner drives more of the printer than the API does (streams, replies): what it asks beyond the fake is
  // not part of these tests, so the fake stands in for the whole Printer here.
  const jobRunner: JobApi = opts.realJobRunner
    ? new JobRunner({ printer: printer as unknown as Printer, files: unused('files'), events, logger, clock: systemClock,
      history: unused('history'), scripts: unused('scripts') })
    : jobs;
  const services: AppServices = {
    config, paths, events, access, printerProfiles, logger, version: '0.0.0-inject',
    slicing: unused('slicing'), files: unused('files'), systemCommands: unused('systemCommands'),
    languagePacks: unused('languagePacks'), logFiles: unused('logFiles'),
    // The boundary: fakes that implement what the routes take.
    // The files API (the selection side of `jobs`) is not built over fakes here: only the job API reaches it.
    printer, ports, jobs: jobRunner as AppServices['jobs'],
  };
  const app = await buildApp(services);
  await app.ready();
  t.after(async () => {
    const mismatches = wireMismatches(app);
    await app.close();
    assert.deepEqual(mismatches, [], 'a response schema changed what the handler answered');
  });

  return {
    app, printer, ports, jobs, config, printerProfiles, access, events, paths, baseDir, apiKey: API_KEY, readonlyKey: READONLY_KEY,
    async request(method, url, json, key = API_KEY) {
      const res = await app.inject({
        method, url, headers: { 'x-api-key': key, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(json === undefined ? {} : { payload: JSON.stringify(json) }),
      });
      return { status: res.statusCode, body: res.body === '' ? '' : (JSON.parse(res.body) as unknown) };
    },
    async api(path, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      const key = init.key === undefined ? API_KEY : init.key;
      if (key !== null && !Object.keys(headers).some((h) => h.toLowerCase() === 'x-api-key')) headers['x-api-key'] = key;
      if (init.json !== undefined) headers['content-type'] = 'application/json';
      const res = await app.inject({
        method: (init.method ?? 'GET') as 'GET', url: path, headers,
        ...(init.json !== undefined ? { payload: JSON.stringify(init.json) } : init.body !== undefined ? { payload: init.body } : {}),
      });
      const out = new Headers();
      for (const [k, v] of Object.entries(res.headers)) {
        if (v === undefined) continue;
        for (const one of Array.isArray(v) ? v : [v]) out.append(k, String(one));
      }
      // A Response cannot carry a body with 204/304.
      const empty = res.statusCode === 204 || res.statusCode === 304;
      return new Response(empty ? null : res.rawPayload, { status: res.statusCode, headers: out });
    },
  };
}
