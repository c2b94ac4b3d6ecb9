// Composition root, the farm's half: builds each printer besides `default` (config.yaml `printers`) as a complete
// OctoPrint endpoint — its unit, its push channel, its Fastify app, its own port — and adds or removes one while running.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Server } from 'node:http';
import { ConfigStore } from './config/config-store.ts';
import { resolvePaths, type Paths } from './config/paths.ts';
import type { PrinterEntry } from './config/printers-schema.ts';
import { EventBus } from './core/event-bus.ts';
import type { EventName } from './core/events.ts';
import type { Clock } from './core/clock.ts';
import type { Logger } from './core/logger.ts';
import { conflict, invalid, notFound } from './core/errors.ts';
import type { AccessService } from './access/access-service.ts';
import type { FileService } from './files/file-service.ts';
import type { SlicingService } from './slicing/slicing-service.ts';
import { createSliceCommand } from './slicing/slice-command.ts';
import type { SystemCommands } from './system/system-commands.ts';
import type { LanguagePacks } from './system/language-packs.ts';
import type { LogFiles } from './system/log-files.ts';
import { ensureInstallationId } from './system/installation.ts';
import type { PortProvider } from './printer/printer-service.ts';
import type { LinkThreadSpawner } from './printer/link/worker-link.ts';
import type { PowerMqtt } from './power/providers/mqtt-topics.ts';
import { PushService } from './push/push-service.ts';
import { bridgeAppKeys } from './push/appkeys-bridge.ts';
import { buildApp } from './http/app.ts';
import type { GantryApp } from './http/types.ts';
import type { FarmPrinterView } from './http/routes/farm-printers.ts';
import { createInjectDispatch } from './http/mqtt-dispatch.ts';
import { MqttService } from './mqtt/mqtt-service.ts';
import { mqttFileMetadata } from './mqtt/printer-view.ts';
import { mqttSettings, type MqttSections } from './mqtt/settings.ts';
import type { ConfigSlice } from './config/config-slice.ts';
import type { Config } from './config/schema.ts';
import { buildPrinterUnit, type PrinterUnit } from './farm/printer-unit.ts';
import { DEFAULT_PRINTER, type PrinterFarm } from './farm/printer-farm.ts';

/**
 * Events of the shared services (file library, slicing, logins, the queue) that every printer's push clients see, as
 * one OctoPrint's would; the printer's own events come from its own bus.
 */
const SHARED_EVENTS = new Set<string>([
  'Startup', 'Shutdown', 'UserLoggedIn', 'UserLoggedOut', 'ConnectivityChanged',
  'Upload', 'FileAdded', 'FileRemoved', 'FileMoved', 'FolderAdded', 'FolderRemoved', 'FolderMoved', 'UpdatedFiles',
  'MetadataAnalysisStarted', 'MetadataAnalysisFinished', 'MetadataStatisticsUpdated',
  'SlicingStarted', 'SlicingDone', 'SlicingCancelled', 'SlicingFailed', 'SlicingProfileAdded', 'SlicingProfileModified', 'SlicingProfileDeleted',
]);

export interface FarmHostDeps {
  /** The main config (its `printers` list is where the farm is persisted) and base dir. */
  config: ConfigStore;
  paths: Paths;
  /** The server's bus: the shared services' events. */
  events: EventBus;
  clock: Clock;
  logger: Logger;
  farm: PrinterFarm;
  files: FileService;
  access: AccessService;
  slicing: SlicingService;
  systemCommands: SystemCommands;
  languagePacks: LanguagePacks;
  logFiles: LogFiles;
  mqtt: PowerMqtt;
  ports: (config: ConfigStore) => PortProvider;
  /** The link-thread spawner of a printer, by name. */
  spawnLinkThread?: (printer: string) => LinkThreadSpawner;
  version: string;
  /** The interface a printer's own port listens on (the main server's). */
  host: () => string;
  /** The main port (the default printer's). */
  mainPort: () => number | null;
}

/** One printer besides `default`, running. */
interface ExtraPrinter {
  entry: PrinterEntry;
  unit: PrinterUnit;
  push: PushService;
  app: GantryApp;
  mqtt: MqttService;
  /** The port its own server listens on (null: only under /printer/NAME/). */
  boundPort: number | null;
  stop(): Promise<void>;
}

/**
 * What a printer's MQTT session reads: the main config's broker and publish settings (one broker for the farm) under
 * the printer's own base topic (`<main base>printer/NAME/`), and the printer's own uuid, name and webcam, so its Home
 * Assistant device and unique ids are its own (an explicit unique_id/node_id of the main config gets `_NAME`).
 */
export function printerMqttConfig(name: string, main: ConfigStore, own: ConfigStore): ConfigSlice<MqttSections> {
  let cache: { main: Config; own: Config; value: Pick<Config, MqttSections> } | undefined;
  const get = (): Pick<Config, MqttSections> => {
    const m = main.current;
    const o = own.current;
    if (cache?.main === m && cache.own === o) return cache.value;
    const base = mqttSettings(m)?.base ?? m.plugins.mqtt.publish.baseTopic ?? '';
    const ha = m.plugins.homeassistant as Record<string, unknown>;
    const suffixed = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? `${v}_${name}` : null);
    const plugins = {
      ...m.plugins,
      mqtt: { ...m.plugins.mqtt, publish: { ...m.plugins.mqtt.publish, baseTopic: `${base}printer/${name}/` }, client: { client_id: null } },
      homeassistant: { ...ha, unique_id: suffixed(ha.unique_id), node_id: suffixed(ha.node_id), node_name: ha.node_name ? `${String(ha.node_name)} ${name}` : null },
    } as unknown as Config['plugins'];
    const value = Object.freeze({ plugins, server: o.server, appearance: o.appearance, webcam: o.webcam });
    cache = { main: m, own: o, value };
    return value;
  };
  return {
    get,
    onChange: (fn) => {
      let before = get();
      const changed = () => {
        const now = get();
        if (now !== before) {
          const was = before;
          before = now;
          fn(now, was);
        }
      };
      const offs = [main.onChange(changed), own.onChange(changed)];
      return () => { for (const off of offs) off(); };
    },
    // The farm's MQTT settings are the main config's: saved there.
    patch: (partial) => main.patch(partial as Record<string, unknown>).then(() => {}),
    unset: (path) => main.unset(path).then(() => {}),
  };
}

/** The folder of a printer's own config and data. */
export function printerBaseDir(mainBase: string, entry: PrinterEntry): string {
  return resolve(mainBase, entry.basedir ?? join('printers', entry.name));
}

/** What a printer's push channel is fed from besides its bus: the shared services and the printer's own unit. */
export interface PrinterPushShared {
  config: ConfigStore;
  events: EventBus;
  access: AccessService;
  clock: Clock;
  logger: Logger;
  slicing: SlicingService;
  files: FileService;
}

/**
 * A printer's push channel with the bridges into it (app keys, slicing and analysis progress, the unit's plugin
 * messages, timelapse); `unbridge` detaches them all. The default printer and every farm printer are built by it.
 */
export function printerPush(unit: PrinterUnit, d: PrinterPushShared): { push: PushService; unbridge(): void } {
  const { timelapse } = unit;
  const push = new PushService({
    config: d.config.slice('server', 'temperature', 'api'), configHash: () => d.config.hash(), events: d.events, access: d.access, clock: d.clock,
    printer: unit.printer, jobs: unit.jobStatus, logger: d.logger.child({ svc: 'push' }),
    timelapse: { config: () => timelapse.pushPayload(), rendering: () => timelapse.rendering() },
  });
  const bridges = [
    bridgeAppKeys(d.access.appKeys, push),
    d.slicing.onProgress((p) => push.slicingProgress(p)),
    d.files.onAnalysisProgress((p) => push.sendPlugin('gantry', { type: 'analysisProgress', ...p }, { permissions: ['FILES_LIST'] })),
    unit.onPluginMessage((plugin, data) => push.sendPlugin(plugin, data, { permissions: ['STATUS'] })),
    timelapse.onConfig(() => push.timelapseConfig(timelapse.pushPayload())),
    timelapse.onRenderProgress((progress) => push.renderProgress(progress)),
  ];
  return { push, unbridge: () => { for (const off of bridges.splice(0)) off(); } };
}

export class FarmHost {
  private readonly extras = new Map<string, ExtraPrinter>();
  /** Adds and removes one at a time: each reads and writes the `printers` list. */
  private serial: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: FarmHostDeps) {}

  /** Starts the configured printers (at server start); one that fails to start is logged and left out. */
  async start(): Promise<void> {
    for (const entry of this.deps.config.current.printers) {
      try {
        await this.build(entry);
      } catch (err) {
        this.deps.logger.error({ err, printer: entry.name }, 'printer failed to start');
      }
    }
  }

  async stop(): Promise<void> {
    for (const p of [...this.extras.values()].reverse()) {
      this.extras.delete(p.entry.name);
      this.deps.farm.remove(p.entry.name);
      await p.stop().catch((err: unknown) => this.deps.logger.error({ err, printer: p.entry.name }, 'printer failed to stop'));
    }
  }

  /** The HTTP server of a printer besides `default` (what `/printer/NAME/` on the main port dispatches to). */
  server(name: string): Server | undefined {
    return this.extras.get(name)?.app.server;
  }

  /** A printer's own MQTT session (besides `default`). */
  mqtt(name: string): MqttService | undefined {
    return this.extras.get(name)?.mqtt;
  }

  /** Every printer with its HTTP port and prefix, `default` first. */
  views(): FarmPrinterView[] {
    return this.deps.farm.list().map((unit) => {
      const extra = this.extras.get(unit.name);
      return {
        name: unit.name, printer: unit.printer, jobs: unit.jobs,
        httpPort: extra ? extra.boundPort : unit.name === DEFAULT_PRINTER ? this.deps.mainPort() : null,
        prefix: `/printer/${encodeURIComponent(unit.name)}/`,
        snapshotUrl: () => unit.config.current.webcam.snapshot || null,
        entry: extra?.entry ?? null,
      };
    });
  }

  /** Adds a printer to the running server and to config.yaml (saved before this returns). */
  add(entry: PrinterEntry): Promise<void> {
    return this.serially(async () => {
      if (entry.name === DEFAULT_PRINTER || this.deps.farm.get(entry.name)) throw conflict(`A printer named ${entry.name} exists already`);
      if (entry.serialPort && entry.virtual) throw invalid('A printer has a serial port or is virtual, not both');
      const taken = [...this.extras.values()].find((p) => entry.httpPort && p.boundPort === entry.httpPort);
      if (taken || (entry.httpPort && entry.httpPort === this.deps.mainPort())) throw conflict(`HTTP port ${entry.httpPort} is in use by another printer`);
      const dir = printerBaseDir(this.deps.paths.base, entry);
      if ([...this.extras.values()].some((p) => printerBaseDir(this.deps.paths.base, p.entry) === dir) || dir === this.deps.paths.base) {
        throw conflict(`The folder ${dir} belongs to another printer`);
      }
      const extra = await this.build(entry);
      try {
        await this.deps.config.patch({ printers: [...this.deps.config.current.printers.filter((p) => p.name !== entry.name), entry] });
      } catch (err) {
        this.extras.delete(entry.name);
        this.deps.farm.remove(entry.name);
        await extra.stop();
        throw err;
      }
    });
  }

  /** Removes an idle printer (refused while it prints): its port is released, config.yaml no longer lists it; its folder stays. */
  remove(name: string): Promise<void> {
    return this.serially(async () => {
      if (name === DEFAULT_PRINTER) throw conflict('The default printer is the main config\'s and cannot be removed');
      const extra = this.extras.get(name);
      if (!extra) throw notFound(`No printer named ${name}`);
      if (extra.unit.jobs.isPrinting()) throw conflict(`Printer ${name} is printing; cancel its print first`);
      await this.deps.config.patch({ printers: this.deps.config.current.printers.filter((p) => p.name !== name) });
      this.extras.delete(name);
      this.deps.farm.remove(name);
      await extra.stop();
    });
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.serial.then(fn, fn);
    this.serial = run.catch(() => {});
    return run;
  }

  private async build(entry: PrinterEntry): Promise<ExtraPrinter> {
    const d = this.deps;
    const logger = d.logger.child({ printer: entry.name });
    const base = printerBaseDir(d.paths.base, entry);
    const paths = resolvePaths(base);
    const fresh = !existsSync(paths.config);
    for (const dir of [paths.base, paths.logs, paths.data, paths.scripts, paths.printerProfiles, paths.timelapse]) await mkdir(dir, { recursive: true });
    const config = await ConfigStore.load(paths.config);
    if (fresh) {
      // A new printer's own config: its name and port; the virtual printer's and temperature settings as the main one's.
      const port = entry.virtual ? 'VIRTUAL' : entry.serialPort ?? null;
      await config.patch({
        appearance: { name: entry.name },
        // A serial device named by the farm is offered as a port even where discovery does not list it (a by-id link).
        serial: { port, ...(entry.baudrate ? { baudrate: entry.baudrate } : {}), autoconnect: port !== null, ...(entry.serialPort ? { additionalPorts: [entry.serialPort] } : {}) },
        devel: structuredClone(d.config.current.devel) as unknown as Record<string, unknown>,
        temperature: structuredClone(d.config.current.temperature) as unknown as Record<string, unknown>,
      });
    }
    await ensureInstallationId(config.slice('server'));
    const events = new EventBus((err, name, owner) => logger.error({ err, event: name, owner }, 'event listener failed'));
    const unit = buildPrinterUnit({
      name: entry.name, config, paths, events, clock: d.clock, logger: d.logger, files: d.files, ports: d.ports,
      ...(d.spawnLinkThread ? { spawnLinkThread: d.spawnLinkThread(entry.name) } : {}), mqtt: d.mqtt,
    });
    // The push clients of this printer see its own events and the shared services' (the library, slicing, logins).
    const viewBus = new EventBus((err, name, owner) => logger.error({ err, event: name, owner }, 'event listener failed'));
    const forwardOwner = `farm-push-${entry.name}`;
    const unforward = [
      d.events.onAny(forwardOwner, (name, payload) => { if (SHARED_EVENTS.has(name)) viewBus.emit(name as EventName, payload as never); }),
      events.onAny(forwardOwner, (name, payload) => viewBus.emit(name as EventName, payload as never)),
    ];
    const { printer, jobs, timelapse } = unit;
    const { push, unbridge: unbridgePush } = printerPush(unit, { config, events: viewBus, access: d.access, clock: d.clock, logger, slicing: d.slicing, files: d.files });
    let app: GantryApp | undefined;
    let mqtt: MqttService | undefined;
    let unitStarted = false;
    let pushStarted = false;
    const stop = async (): Promise<void> => {
      await mqtt?.stop();
      await push.detach();
      await app?.close().catch((err: unknown) => logger.warn({ err }, 'printer HTTP server failed to close'));
      if (pushStarted) await push.stop();
      unbridgePush();
      for (const u of unforward) u();
      if (unitStarted) await unit.stop();
    };
    try {
      await unit.start();
      unitStarted = true;
      await push.start();
      pushStarted = true;
      const ports = unit.ports;
      app = await buildApp({
        config, paths, events, access: d.access, printerProfiles: unit.profiles, slicing: d.slicing,
        slice: createSliceCommand({ slicing: d.slicing, files: d.files, profiles: unit.profiles, jobs, logger: logger.child({ svc: 'slicing' }) }),
        files: d.files, jobs, sdFiles: unit.sdFiles, systemCommands: d.systemCommands, languagePacks: d.languagePacks, logFiles: d.logFiles,
        timelapse, printer, ports, recovery: unit.journal, bedMesh: unit.bedMesh, power: unit.power, layerProgress: unit.layerProgress,
        spools: unit.spools, cancelObjects: unit.cancelObjects,
        serialOptions: async () => ({ ports: await ports.listPorts(), baudrates: ports.baudrates() }), logger, version: d.version,
      });
      push.attach(app.server);
      await app.ready();
      // Its own MQTT session: its base topic, its Home Assistant device; API requests over MQTT run through its app.
      mqtt = new MqttService({
        config: printerMqttConfig(entry.name, d.config, config), events: viewBus, clock: d.clock, logger: logger.child({ svc: 'mqtt' }),
        version: d.version, dispatch: createInjectDispatch(app, d.access), printer: unit.mqttView, jobs: unit.jobStatus, fileMetadata: mqttFileMetadata(d.files),
      });
      await mqtt.start();
      let boundPort: number | null = null;
      if (entry.httpPort !== undefined && entry.httpPort !== null) {
        await app.listen({ host: d.host(), port: entry.httpPort });
        const addr = app.server.address();
        boundPort = typeof addr === 'object' && addr ? addr.port : entry.httpPort;
      }
      const extra: ExtraPrinter = { entry, unit, push, app, mqtt, boundPort, stop };
      this.extras.set(entry.name, extra);
      d.farm.add(unit);
      logger.info({ port: boundPort, dir: base }, 'printer started');
      return extra;
    } catch (err) {
      await stop().catch(() => {});
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw conflict(`HTTP port ${entry.httpPort} is in use`);
      throw err;
    }
  }
}
