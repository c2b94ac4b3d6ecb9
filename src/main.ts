// Composition root: the only file that knows every concrete class. Builds the services, wires them, starts and stops them in order.
import { pino, multistream } from 'pino';
import { readFileSync } from 'node:fs';
import { consoleLogStream } from './system/console-log.ts';
import { join } from 'node:path';
import { removeStaleTempFiles } from './core/atomic-file.ts';
import { ConfigStore } from './config/config-store.ts';
import { resolvePaths, createFolders, type Paths } from './config/paths.ts';
import { EventBus } from './core/event-bus.ts';
import { systemClock, type Clock } from './core/clock.ts';
import type { Logger } from './core/logger.ts';
import { AccessService } from './access/access-service.ts';
import { buildApp } from './http/app.ts';
import { FileService } from './files/file-service.ts';
import { AnalysisQueue } from './files/analysis/queue.ts';
import type { GcodeAnalysis } from './files/analysis/types.ts';
import type { PushService } from './push/push-service.ts';
import type { PrinterProfiles } from './printer/profiles/printer-profiles.ts';
import type { PrinterService, PortProvider } from './printer/printer-service.ts';
import type { LinkThreadSpawner } from './printer/link/worker-link.ts';
import type { Worker } from 'node:worker_threads';
import type { TimelapseService } from './timelapse/timelapse-service.ts';
import { buildPrinterUnit } from './farm/printer-unit.ts';
import { PrinterFarm, DEFAULT_PRINTER } from './farm/printer-farm.ts';
import { mqttFileMetadata } from './mqtt/printer-view.ts';
import type { TransportFactory } from './protocol/line-transport.ts';
import { startThread } from './core/thread-code.ts';
import { listPorts, baudrateOptions, detectionBaudrates } from './transports/port-discovery.ts';
import { SlicingService } from './slicing/slicing-service.ts';
import { ProfileStore } from './slicing/profile-store.ts';
import { PrusaSlicerAdapter } from './slicing/prusa-slicer.ts';
import { createSliceCommand } from './slicing/slice-command.ts';
import { FileTypes, isMachineCode } from './files/file-types.ts';
import { invalid } from './core/errors.ts';
import type { GantryApp } from './http/types.ts';
import { SystemCommands } from './system/system-commands.ts';
import { LanguagePacks } from './system/language-packs.ts';
import { LogFiles, ReopenableLogStream } from './system/log-files.ts';
import { ensureInstallationId } from './system/installation.ts';
import { publishLocalControl } from './access/local-control.ts';
import { MqttService } from './mqtt/mqtt-service.ts';
import { createInjectDispatch } from './http/mqtt-dispatch.ts';
import { NotificationService } from './notifications/notification-service.ts';
import type { MoonrakerService } from './moonraker/moonraker-service.ts';
import { buildMoonraker, mountMoonraker } from './moonraker/mount.ts';
import { registerUi } from './moonraker/ui-static.ts';
import { PrintQueue } from './queue/print-queue.ts';
import { farmQueuePrinters } from './farm/farm-queue-printers.ts';
import { FarmHost, printerPush } from './main-farm.ts';
import { mountPrinters, PRINTER_PATH } from './http/printer-mount.ts';
import { TopicLinkRelay } from './farm/topic-relay.ts';

export interface StartOptions {
  baseDir: string;
  host?: string;
  port?: number;
  /** Also log to stdout (the CLI does; tests do not). */
  logToConsole?: boolean;
  logLevel?: string;
  clock?: Clock;
  /** Overrides merged into the settings in memory and saved (tests use it to set up a scenario). */
  settings?: Record<string, unknown>;
  /** Told of each printer link thread started, with its printer's name (tests and benches watch or end them). */
  onLinkThread?: (printer: string, thread: Worker) => void;
}

export interface Gantry {
  app: GantryApp;
  url: string;
  port: number;
  paths: Paths;
  config: ConfigStore;
  events: EventBus;
  access: AccessService;
  push: PushService;
  slicing: SlicingService;
  printerProfiles: PrinterProfiles;
  printer: PrinterService;
  /** The printers by name (a one-printer install: `default`, which is `printer`). */
  farm: PrinterFarm;
  /** The printers besides `default` as endpoints (config.yaml `printers`): add, remove, their servers. */
  farmHost: FarmHost;
  /** The file library every printer prints from. */
  files: FileService;
  timelapse: TimelapseService;
  mqtt: MqttService;
  /** The Moonraker edge (Mainsail, Fluidd); undefined when moonraker.enabled is off. */
  moonraker: MoonrakerService | undefined;
  logger: Logger;
  stop(): Promise<void>;
  /** What a stop under way waits for: the HTTP server's close or a service, by name. */
  stopStage(): string | undefined;
}

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

interface Service {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

// A printer's serial ports plus the built-in virtual printer as port VIRTUAL, as its config sees them. The transports load
// on first use: the link usually runs in its own thread (printer/link/link-thread.ts), with the transports made there.
export function portsFor(printerConfig: ConfigStore): PortProvider {
  let transportFactory: Promise<TransportFactory> | undefined;
  const current = () => printerConfig.current;
  return {
    listPorts: () => listPorts({
      additionalPorts: current().serial.additionalPorts, blacklistedPorts: current().serial.blacklistedPorts,
      virtualPrinter: current().devel.virtualPrinter.enabled,
    }),
    baudrates: () => baudrateOptions(current().serial),
    detectionBaudrates: (portCount) => detectionBaudrates(current().serial, { lastUsed: current().serial.baudrate, portCount }),
    transports: () => (transportFactory ??= import('./transports/transport-factory.ts')
      .then(({ createTransportFactory }) => createTransportFactory({ settings: current, virtualSdFolder: null }))),
  };
}
// serial.linkThread: worker runs a printer's link in src/printer/link/link-thread.ts, with transports made there as here.
export const spawnLinkThread: LinkThreadSpawner = (init) => startThread(new URL('./printer/link/link-thread.ts', import.meta.url), 'link-worker.js', {
  name: 'printer-link', workerData: init,
  // The port's fd is opened by the serial binding and closed with fs.close (serial-io.ts): tracking, which only
  // covers fs.open, warned 'closed but not opened in unmanaged mode' on every disconnect.
  trackUnmanagedFds: false,
  // A thread's isolate gets V8's default young generation (16 MB+), whatever the launcher set: streaming RSS
  // 121 → 108 MB (bench/memory.ts), streaming ratios unchanged.
  resourceLimits: { maxYoungGenerationSizeMb: 2 },
});


async function createLogger(file: ReopenableLogStream, opts: StartOptions): Promise<pino.Logger> {
  const streams: pino.StreamEntry[] = [{ stream: file, level: 'trace' }];
  if (opts.logToConsole) streams.push({ stream: await consoleLogStream(), level: (opts.logLevel ?? 'info') as pino.Level });
  return pino({ level: opts.logLevel ?? 'info', base: undefined }, multistream(streams));
}

export async function startGantry(opts: StartOptions): Promise<Gantry> {
  const clock = opts.clock ?? systemClock;
  let paths = resolvePaths(opts.baseDir);
  await createFolders(paths);
  const config = await ConfigStore.load(paths.config);
  if (opts.settings) await config.patch(opts.settings);
  paths = resolvePaths(opts.baseDir, config.current);
  await createFolders(paths);
  // Temp files of atomic writes interrupted by a kill -9 (they may hold the API key); nothing writes yet.
  const staleTemps = await removeStaleTempFiles([paths.base, paths.data, join(paths.data, 'appkeys'), paths.printerProfiles, paths.slicingProfiles]);
  await ensureInstallationId(config.slice('server'));

  // Reopenable so deleting gantry.log through the API does not leave the logger writing to an unlinked file.
  const logStream = new ReopenableLogStream(paths.logs);
  const logger = await createLogger(logStream, opts);
  if (staleTemps.length > 0) logger.warn({ files: staleTemps }, 'removed temp files left by an interrupted save');
  const events = new EventBus((err, name, owner) => logger.error({ err, event: name, owner }, 'event listener failed'));

  const access = new AccessService(config.slice('accessControl', 'api', 'server'), { users: paths.users, groups: `${paths.base}/groups.yaml`, appKeys: `${paths.data}/appkeys/keys.yaml` }, clock, logger.child({ svc: 'access' }));

  const slicing = new SlicingService(
    [new PrusaSlicerAdapter({ config: config.slice('slicing') })],
    new ProfileStore(paths.slicingProfiles), config.slice('slicing'), events, logger.child({ svc: 'slicing' }));

  // Workers start on demand and retire after 2 s idle: a warm one cost ≈ 10 MB RSS all day (and ≈ 8 MB during the
  // print that usually follows an upload), while starting the prebuilt dist/analysis-worker.js costs ≈ 70 ms CPU,
  // small next to analysing a large file (bench/memory.ts).
  const analysisQueue = new AnalysisQueue({
    logger: logger.child({ svc: 'analysis' }),
    warmWorkers: 0,
    idleTimeoutMs: 2000,
  });
  const fileTypes = new FileTypes();
  // The printers by name: the library holds a file any of them prints, and analyses uploads for the default one.
  const farm = new PrinterFarm();
  const files = new FileService({
    types: fileTypes, root: paths.uploads, config: config.slice('gcodeAnalysis', 'feature', 'server'), events, logger: logger.child({ svc: 'files' }), analyser: analysisQueue,
    analysisOptions: () => farm.analysisOptions(), usage: farm,
  });

  // Power devices' MQTT topics go through the broker session built below, with the app.
  const mqttTopics = new TopicLinkRelay();
  // The printer of this install: everything of one printer, built by one call (src/farm/printer-unit.ts).
  const threadsOf = (name: string): LinkThreadSpawner => (opts.onLinkThread
    ? async (init) => { const w = await spawnLinkThread(init); opts.onLinkThread?.(name, w); return w; }
    : spawnLinkThread);
  const unit = buildPrinterUnit({
    name: DEFAULT_PRINTER, config, paths, events, clock, logger, files, ports: portsFor, spawnLinkThread: threadsOf(DEFAULT_PRINTER), mqtt: mqttTopics,
  });
  farm.add(unit);
  const { printer, jobs, timelapse, journal, sdFiles } = unit;

  let mqtt: MqttService | undefined;
  const { push, unbridge: unbridgePush } = printerPush(unit, { config, events, access, clock, logger, slicing, files });
  // The farm's print queue, over every printer of the farm.
  const queue = new PrintQueue({
    file: join(paths.data, 'queue.json'), events, logger: logger.child({ svc: 'queue' }),
    printers: farmQueuePrinters(farm),
    library: {
      describe: async (path) => {
        const f = await files.file(path);
        if (!isMachineCode(f.name)) throw invalid('Only machine code (G-code) files can be queued');
        const analysis = f.analysisMissing ? undefined : f.meta.analysis as Partial<GcodeAnalysis> | undefined;
        return { path: f.path, slicedFor: analysis ? analysis.gantry?.slicer?.slicedFor ?? null : undefined };
      },
    },
    onChange: (snapshot) => push.sendPlugin('gantry', { type: 'queue', queue: snapshot }, { permissions: ['STATUS'] }),
  });

  // Start order matters: later services may use earlier ones; stop runs in reverse.
  const systemCommands = new SystemCommands(config.slice('server', 'system'), logger.child({ svc: 'system' }));
  const languagePacks = new LanguagePacks(paths.translations, logger.child({ svc: 'languages' }));
  const logFiles = new LogFiles(paths.logs, logStream);
  // The printers besides `default`, each its own OctoPrint endpoint (src/main-farm.ts); the main port is known once bound.
  let mainPort: number | null = null;
  const farmHost = new FarmHost({
    config, paths, events, clock, logger, farm, files, access, slicing, systemCommands, languagePacks, logFiles, mqtt: mqttTopics,
    ports: portsFor, spawnLinkThread: threadsOf, version: VERSION, host: () => opts.host ?? config.current.server.host, mainPort: () => mainPort,
  });
  // Shared by the farm; they read the default printer's job.
  const notifications = new NotificationService({
    config: config.slice('plugins', 'appearance', 'webcam'), events, clock, logger: logger.child({ svc: 'notifications' }),
    progress: () => {
      const p = jobs.snapshot().progress;
      return p ? { completion: p.completion ?? null, printTimeLeft: p.printTimeLeft ?? null } : null;
    },
  });

  // Moonraker's API for Mainsail, Fluidd and other Moonraker clients, on the same services (the default printer).
  const moonraker = config.current.moonraker.enabled ? buildMoonraker(unit, {
    access, files, clock, logger, version: VERSION, queue: { service: queue, events }, system: systemCommands,
  }) : undefined;

  const services: Service[] = [
    { name: 'systemCommands', start: () => systemCommands.start(), stop: () => systemCommands.stop() },
    { name: 'access', start: () => access.start(), stop: () => access.stop() },
    { name: 'push', start: () => push.start(), stop: async () => { unbridgePush(); await push.stop(); } },
    { name: 'slicing', start: async () => {
      // Uploads accept the model formats of the slicers that are installed; a changed binary path is probed again.
      const registerModelTypes = () => { for (const ext of slicing.modelExtensions()) fileTypes.register({ typePath: ['model', ext], extensions: [ext] }); };
      await slicing.start();
      registerModelTypes();
      config.onChange((now, before) => {
        if (now.slicing.prusaSlicerPath !== before.slicing.prusaSlicerPath) void slicing.refresh().then(registerModelTypes);
      });
    }, stop: () => slicing.stop() },
    { name: 'files', start: async () => { analysisQueue.start(); await files.start(); }, stop: async () => { await files.stop(); await analysisQueue.stop(); } },
    { name: `printer ${unit.name}`, start: () => unit.start(), stop: () => unit.stop() },
    { name: 'farm printers', start: () => farmHost.start(), stop: () => farmHost.stop() },
    { name: 'notifications', start: () => notifications.start(), stop: () => notifications.stop() },
    { name: 'queue', start: () => queue.start(), stop: () => queue.stop() },
    ...(moonraker ? [{ name: 'moonraker', start: () => moonraker.start(), stop: () => moonraker.stop() }] : []),
  ];
  const started: Service[] = [];
  // A start that fails half-way gives back what it took: the services started so far and the log file's handle (left
  // to garbage collection, Node 26 raises that as an uncaught error in whatever process started the server).
  const giveBack = async (err: unknown): Promise<never> => {
    for (const s of started.reverse()) await s.stop().catch(() => {});
    logger.flush();
    logStream.end();
    throw err;
  };
  try {
    for (const s of services) {
      await s.start();
      started.push(s);
    }
  } catch (err) {
    await giveBack(err);
  }

  const slice = createSliceCommand({ slicing, files, profiles: unit.profiles, jobs, logger: logger.child({ svc: 'slicing' }) });
  // From here on a failure (the port taken, the control file not writable) closes what opened since: the app (its
  // preClose hooks stop MQTT and detach push), then the services and the log.
  let app: GantryApp | undefined;
  let withdrawLocalControl: () => Promise<void>;
  let boundPort: number;
  let url: string;
  try {
    const ports = unit.ports;
    app = await buildApp({ config, paths, events, access, printerProfiles: unit.profiles, slicing, slice, files, jobs, sdFiles, systemCommands, languagePacks, logFiles, timelapse, printer, ports, recovery: journal, notifications, bedMesh: unit.bedMesh, power: unit.power, layerProgress: unit.layerProgress, spools: unit.spools, queue, farm: farmHost, cancelObjects: unit.cancelObjects,
      serialOptions: async () => ({ ports: await ports.listPorts(), baudrates: ports.baudrates() }), logger, version: VERSION });
    // MQTT: publishes from the event bus and printer listeners; API requests over MQTT run through the app's own routes.
    const service = new MqttService({
      config: config.slice('plugins', 'server', 'appearance', 'webcam'), events, clock, logger: logger.child({ svc: 'mqtt' }), version: VERSION, dispatch: createInjectDispatch(app, access),
      printer: unit.mqttView, jobs: unit.jobStatus, fileMetadata: mqttFileMetadata(files),
    });
    mqtt = service;
    mqttTopics.connect(service.topicLink);
    let unbridgeMqttSlicing = (): void => {};
    // Stopped before the app closes so `disconnected` goes out and no API request arrives at a closing app (also
    // when its start failed half-way).
    app.addHook('preClose', async () => { unbridgeMqttSlicing(); await service.stop(); });
    await service.start();
    unbridgeMqttSlicing = slicing.onProgress((p) => service.slicingProgress(p));
    push.attach(app.server, (path) => path.startsWith(PRINTER_PATH) || (moonraker !== undefined && moonraker.owns(path)));
    // Upgraded push sockets are not closed by the HTTP server; close them first so app.close() can finish.
    app.addHook('preClose', () => push.detach());
    if (moonraker) {
      mountMoonraker(app, moonraker);
      const ui = config.current.moonraker.ui;
      if (ui) {
        const served = await registerUi(app, ui, config.current.moonraker.uiPath);
        if (served) logger.info({ ui: served.kind, at: served.mount }, 'serving a Moonraker UI');
        if (served?.warning) logger.warn({ ui: served.kind, at: served.mount }, served.warning);
        else logger.warn({ folder: ui }, 'moonraker.ui holds neither a Mainsail nor a Fluidd release');
      }
    }
    // `/printer/NAME/…`: each printer's own server under a prefix (the default one's too); in front of everything above.
    const main = app.server;
    const mount = mountPrinters(main, (name) => (name === DEFAULT_PRINTER ? main : farmHost.server(name)));
    app.addHook('preClose', () => { mount.unmount(); });
    const host = opts.host ?? config.current.server.host;
    const port = opts.port ?? config.current.server.port;
    await app.listen({ host, port });
    const addr = app.server.address();
    boundPort = typeof addr === 'object' && addr ? addr.port : port;
    mainPort = boundPort;
    url = `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
    // `gantry user …` / `gantry apikey` on this machine go through this server's API while it runs.
    withdrawLocalControl = await publishLocalControl(paths.base, url, access);
  } catch (err) {
    await app?.close().catch(() => {});
    return giveBack(err);
  }
  // The stop below closes over these (a `let` would not stay narrowed in it).
  const served = app;
  const broker = mqtt;
  events.emit('Startup', {});
  logger.info({ url }, 'Gantry listening');
  files.analyseBacklog();

  let stopping: Promise<void> | undefined;
  let stage: string | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      events.emit('Shutdown', {});
      stage = 'local control';
      await withdrawLocalControl();
      stage = 'HTTP server';
      await served.close();
      for (const s of [...started].reverse()) {
        stage = s.name;
        try {
          await s.stop();
        } catch (err) {
          logger.error({ err, service: s.name }, 'service failed to stop');
        }
      }
      stage = undefined;
      logger.info('Gantry stopped');
      logger.flush();
      // Its file handle would otherwise stay open until garbage collection (one per server a process starts and stops).
      logStream.end();
    })();
    return stopping;
  };

  return { app: served, url, port: boundPort, paths, config, events, access, push, printerProfiles: unit.profiles, slicing, printer, timelapse, farm, farmHost, files, mqtt: broker, moonraker, logger, stop, stopStage: () => stage };
}
