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
import { SdCardFiles } from './files/sd-card.ts';
import { JobRunner } from './printer/job/job-runner.ts';
import { PrintHistory } from './printer/job/print-history.ts';
import { sdTransfer } from './printer/job/sd-transfer.ts';
import { jobStatusFrom } from './push/sources.ts';
import { PushService } from './push/push-service.ts';
import { bridgeAppKeys } from './push/appkeys-bridge.ts';
import { EventSubscriptions } from './event-actions/event-subscriptions.ts';
import { PrinterProfiles } from './printer/profiles/printer-profiles.ts';
import { PrinterService, type PortProvider } from './printer/printer-service.ts';
import { FirmwareLimits } from './printer/readings/firmware-limits.ts';
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
import { TimelapseService } from './timelapse/timelapse-service.ts';
import { NotificationService } from './notifications/notification-service.ts';
import { BedMeshService, visualizerBed, visualizerCells } from './bed-mesh/bed-mesh-service.ts';
import { publishLocalControl } from './access/local-control.ts';
import { MqttService } from './mqtt/mqtt-service.ts';
import { createInjectDispatch } from './http/mqtt-dispatch.ts';
import { PrintJournal } from './recovery/print-journal.ts';
import { AutoReconnect } from './recovery/auto-reconnect.ts';
import { MoonrakerService } from './moonraker/moonraker-service.ts';
import { registerMoonrakerRoutes } from './moonraker/http-routes.ts';
import { registerUi } from './moonraker/ui-static.ts';
import { PowerService } from './power/power-service.ts';
import { LayerProgressService } from './layer-progress/layer-progress-service.ts';
import { SpoolService } from './spools/spool-service.ts';
import { PrintQueue } from './queue/print-queue.ts';
import { singlePrinter } from './queue/single-printer.ts';
import { CancelObjectService } from './objects/cancel-object-service.ts';

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

  const printerProfiles = new PrinterProfiles(paths.printerProfiles, config, events, logger.child({ svc: 'printerProfiles' }));

  const slicing = new SlicingService(
    [new PrusaSlicerAdapter({ binary: () => config.current.slicing.prusaSlicerPath, timeoutMs: config.current.slicing.timeout * 1000 })],
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
  // What the firmware reported of its limits (fed from the printer's replies below), for estimates made later.
  const firmwareLimits = new FirmwareLimits();
  const files = new FileService({
    types: fileTypes, root: paths.uploads, config: config.slice('gcodeAnalysis', 'feature', 'server'), events, logger: logger.child({ svc: 'files' }), analyser: analysisQueue,
    analysisOptions: () => {
      const profile = printerProfiles.getCurrentOrDefault();
      const diameter = profile.extruder.filamentDiameter;
      return {
        defaultFeedrate: profile.axes.x.speed,
        bedZ: config.current.gcodeAnalysis.bedZ,
        g90InfluencesExtruder: config.current.feature.g90InfluencesExtruder,
        ...(diameter !== undefined ? { filamentDiameter: [diameter] } : {}),
        ...(profile.machineLimits ? { limits: profile.machineLimits } : {}),
        firmwareLimits: firmwareLimits.report(),
      };
    },
  });

  // The printer link: serial ports plus the built-in virtual printer as port VIRTUAL.
  // Loaded on first use: the link usually runs in its own thread (printer/link/link-thread.ts), with the transports made there.
  let transportFactory: Promise<TransportFactory> | undefined;
  const ports: PortProvider = {
    listPorts: () => listPorts({
      additionalPorts: config.current.serial.additionalPorts, blacklistedPorts: config.current.serial.blacklistedPorts,
      virtualPrinter: config.current.devel.virtualPrinter.enabled,
    }),
    baudrates: () => baudrateOptions(config.current.serial),
    detectionBaudrates: (portCount) => detectionBaudrates(config.current.serial, { lastUsed: config.current.serial.baudrate, portCount }),
    transports: () => (transportFactory ??= import('./transports/transport-factory.ts')
      .then(({ createTransportFactory }) => createTransportFactory({ settings: () => config.current, virtualSdFolder: null }))),
  };
  const printer = new PrinterService({
    config, events, logger: logger.child({ svc: 'printer' }), profiles: printerProfiles, ports, logsDir: paths.logs, scriptsDir: paths.scripts,
    // serial.linkThread: worker runs the link in src/printer/link/link-thread.ts, with transports made there as here.
    linkThread: {
      spawn: (init) => startThread(new URL('./printer/link/link-thread.ts', import.meta.url), 'link-worker.js', {
        name: 'printer-link', workerData: init,
        // The port's fd is opened by the serial binding and closed with fs.close (serial-io.ts): tracking, which only
        // covers fs.open, warned 'closed but not opened in unmanaged mode' on every disconnect.
        trackUnmanagedFds: false,
        // A thread's isolate gets V8's default young generation (16 MB+), whatever the launcher set: streaming RSS
        // 121 → 108 MB (bench/memory.ts), streaming ratios unchanged.
        resourceLimits: { maxYoungGenerationSizeMb: 2 },
      }),
      config: () => ({ serial: config.current.serial, devel: config.current.devel }), virtualSdFolder: null,
    },
    beforeConnect: (o) => power.beforeConnect(o.port),
  });
  printer.watchReplies((line) => firmwareLimits.observe(line));

  const jobRunner: JobRunner = new JobRunner({
    printer, files, events, clock, logger: logger.child({ svc: 'jobs' }),
    history: new PrintHistory(`${paths.data}/print-history.json`, logger.child({ svc: 'history' })),
    scripts: { settings: () => config.current.scripts.gcode, scriptsDir: paths.scripts, profile: () => printer.profile() },
    sdPollInterval: () => config.current.serial.timeout.sdStatus,
    sdPausePosition: () => ({ log: config.current.serial.logPositionOnPause, waitSeconds: config.current.serial.timeout.positionLogWait }),
    logPositionOnCancel: () => config.current.serial.logPositionOnCancel,
    interruption: (error) => journal.interruption(error),
    beforeStart: (file) => spools.beforeStart(file),
    historyExtras: () => spools.historyExtras(),
    lineFilter: (path, offset) => cancelObjects.lineFilter(path, offset),
    cancelledObjects: () => cancelObjects.cancelledNames(),
  });
  // Where a streamed print is, on disk, so it can be resumed after a reset, a halt, a pulled cable or a host crash.
  const journal: PrintJournal = new PrintJournal({
    jobs: jobRunner, files, temperatures: () => printer.temperatures(), events, logger: logger.child({ svc: 'recovery' }),
    now: () => clock.now() / 1000, dataDir: paths.data,
    scripts: { settings: () => config.current.scripts.gcode, scriptsDir: paths.scripts, profile: () => printer.profile() },
    settings: () => config.current.recovery,
  });
  const autoReconnect = new AutoReconnect({
    printer, ports, journal, events, logger: logger.child({ svc: 'reconnect' }), settings: () => config.current.recovery,
  });
  files.setUsage(jobRunner);
  const sdFiles = new SdCardFiles({
    printer, files, events, logger: logger.child({ svc: 'sdcard' }),
    transfer: (abs, remote) => sdTransfer(printer, abs, remote),
    afterTransfer: (remote, o) => jobRunner.select('sdcard', remote, { print: o.print, user: o.user }),
    isInUse: (name) => jobRunner.isInUse('sdcard', name),
    jobActive: () => jobRunner.isPrinting(),
  });

  const push = new PushService({ config, events, access, clock, printer, jobs: jobStatusFrom(jobRunner, () => [
    ...jobRunner.busyFiles(), ...files.analysing().map(({ origin, path }) => ({ origin, path })),
  ]),
    logger: logger.child({ svc: 'push' }) });
  const unbridgeAppKeys = bridgeAppKeys(access.appKeys, push);
  const unbridgeSlicing = slicing.onProgress((p) => push.slicingProgress(p));
  const unbridgeAnalysis = files.onAnalysisProgress((p) => push.sendPlugin('gantry', { type: 'analysisProgress', ...p }, { permissions: ['FILES_LIST'] }));
  // Power control (PSU Control's API and settings, src/power/); MQTT devices go through the broker session built below.
  let mqtt: MqttService | undefined;
  // Subscriptions a power device asks for before the broker session exists (power starts first): handed over below.
  const earlyTopics: Array<{ topic: string; fn: (payload: string) => void; stop: () => void }> = [];
  const power: PowerService = new PowerService({
    settings: () => config.current.plugins.psucontrol, printer, events, logger: logger.child({ svc: 'power' }),
    push: (data) => push.sendPlugin('psucontrol', data, { permissions: ['STATUS'] }),
    mqtt: {
      connected: () => mqtt?.topicLink.connected() ?? false,
      publish: (topic, payload) => mqtt?.topicLink.publish(topic, payload),
      subscribe: (topic, fn) => {
        if (mqtt) return mqtt.topicLink.subscribe(topic, fn);
        const early = { topic, fn, stop: () => { earlyTopics.splice(earlyTopics.indexOf(early), 1); } };
        earlyTopics.push(early);
        return () => early.stop();
      },
    },
    connectOptions: () => ({ port: config.current.serial.port ?? undefined, baudrate: config.current.serial.baudrate ?? undefined, profileId: config.current.printerProfiles.default ?? undefined }),
    waitForPort: async (port, ms) => {
      const until = Date.now() + ms;
      while (Date.now() < until && !(await ports.listPorts()).includes(port)) await new Promise((r) => setTimeout(r, 250));
    },
  });
  const layerProgress = new LayerProgressService({
    settings: () => config.current.plugins.DisplayLayerProgress, jobs: jobRunner, events, logger: logger.child({ svc: 'layerProgress' }),
    printer: {
      state: () => printer.state(), currentZ: () => printer.currentZ(), temperatures: () => printer.temperatures(), isOperational: () => printer.isOperational(),
      commands: (lines) => printer.commands(lines),
      setTemperatures: (targets) => { for (const [heater, t] of Object.entries(targets)) printer.setTemperature(heater, t); },
    },
    absolutePath: (path) => files.absolutePath(path),
    push: (id, data) => push.sendPlugin(id, data, { permissions: ['STATUS'] }),
  });
  // Spoolman (src/spools/): the active spool per tool, the filament a print uses, the low-filament check.
  const spools: SpoolService = new SpoolService({
    settings: () => config.current.plugins.spoolman, events, logger: logger.child({ svc: 'spools' }), file: join(paths.data, 'spoolman.json'),
    jobs: jobRunner, absolutePath: (path) => files.absolutePath(path),
    hostWords: (word, fn) => printer.handleHostWord(word, fn),
    say: (line) => printer.hostSays(line),
    push: (data) => push.sendPlugin('spoolman', data, { permissions: ['STATUS'] }),
  });
  // The farm's print queue, over the default printer until a farm of printer units gives it all of them.
  const queue = new PrintQueue({
    file: join(paths.data, 'queue.json'), events, logger: logger.child({ svc: 'queue' }),
    printers: singlePrinter({
      events,
      idle: () => printer.isOperational() && jobRunner.isReady(),
      print: (path) => jobRunner.select('local', path, { print: true }),
      watchState: (fn) => printer.subscribe({ state: () => fn() }),
      profile: () => {
        const p = printerProfiles.getCurrentOrDefault();
        return { bedX: p.volume.width, bedY: p.volume.depth, nozzleDiameter: p.extruder.nozzleDiameter };
      },
    }),
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
  const cancelObjects: CancelObjectService = new CancelObjectService({
    settings: () => config.current.plugins.cancelobject, events, logger: logger.child({ svc: 'cancelobject' }),
    objectsOf: async (path) => (await files.analysisOf(path))?.gantry?.objects ?? null,
    commands: (lines) => printer.commands(lines),
    cancelPrint: () => jobRunner.command('cancel'),
    filepos: () => jobRunner.snapshot().progress?.filepos ?? null,
    push: (data) => push.sendPlugin('cancelobject', data, { permissions: ['STATUS'] }),
  });
  const eventSubscriptions = new EventSubscriptions({
    config: config.slice('events'), events, logger: logger.child({ svc: 'events' }), gcode: printer,
    context: { currentZ: () => printer.currentZ(), selectedFile: () => jobRunner.selected(), progress: () => jobRunner.snapshot().progress?.completion ?? null },
  });

  // Start order matters: later services may use earlier ones; stop runs in reverse.
  const systemCommands = new SystemCommands(config.slice('server', 'system'), logger.child({ svc: 'system' }));
  const languagePacks = new LanguagePacks(paths.translations, logger.child({ svc: 'languages' }));
  const logFiles = new LogFiles(paths.logs, logStream);
  const timelapse = new TimelapseService({
    config: config.slice('webcam', 'folder', 'feature'), events, clock, logger: logger.child({ svc: 'timelapse' }), moviesDir: paths.timelapse, baseDir: paths.base,
    printer, printing: () => jobRunner.isPrinting(),
  });
  const unbridgeTimelapse = [
    timelapse.onConfig(() => push.timelapseConfig(timelapse.pushPayload())),
    timelapse.onRenderProgress((progress) => push.renderProgress(progress)),
  ];
  push.setTimelapseSource({ config: () => timelapse.pushPayload(), rendering: () => timelapse.rendering() });
  const notifications = new NotificationService({
    config: config.slice('plugins', 'appearance', 'webcam'), events, clock, logger: logger.child({ svc: 'notifications' }),
    progress: () => {
      const p = jobRunner.snapshot().progress;
      return p ? { completion: p.completion ?? null, printTimeLeft: p.printTimeLeft ?? null } : null;
    },
  });
  const bedMesh = new BedMeshService({
    config: config.slice('plugins'), events, clock, logger: logger.child({ svc: 'bedMesh' }), printer, file: join(paths.data, 'bed-meshes.json'),
    printerName: () => config.current.appearance.name || 'Gantry',
    bed: () => {
      const p = printerProfiles.getCurrentOrDefault();
      return { id: p.id, width: p.volume.width, depth: p.volume.depth, height: p.volume.height, circular: p.volume.formFactor === 'circular' };
    },
  });
  // Bed Level Visualizer's UI gets the mesh as the plugin pushes it.
  const unbridgeBedMesh = bedMesh.onMesh((m, bed) => push.sendPlugin('bedlevelvisualizer', { mesh: visualizerCells(m), bed: visualizerBed(bed) }, { permissions: ['STATUS'] }));

  // Moonraker's API for Mainsail, Fluidd and other Moonraker clients, on the same services.
  const moonraker = config.current.moonraker.enabled ? new MoonrakerService({
    config, events, access, printer, jobs: jobRunner, files, sdFiles, clock, logger: logger.child({ svc: 'moonraker' }), version: VERSION,
    dataDir: paths.data, profile: () => printerProfiles.getCurrentOrDefault(),
    bedMesh, power: { service: power, settings: () => config.current.plugins.psucontrol },
    layers: () => {
      const layer = (layerProgress.values().layer ?? {}) as { total?: unknown; current?: unknown };
      const num = (v: unknown) => (typeof v === 'number' || (typeof v === 'string' && v.trim() !== '')) && Number.isFinite(Number(v)) ? Number(v) : null;
      return { total: num(layer.total), current: num(layer.current) };
    },
    spools,
    objects: cancelObjects,
  }) : undefined;

  const services: Service[] = [
    { name: 'systemCommands', start: () => systemCommands.start(), stop: () => systemCommands.stop() },
    { name: 'access', start: () => access.start(), stop: () => access.stop() },
    { name: 'push', start: () => push.start(), stop: async () => { unbridgeAppKeys(); unbridgeSlicing(); unbridgeAnalysis(); await push.stop(); } },
    { name: 'eventSubscriptions', start: () => eventSubscriptions.start(), stop: () => eventSubscriptions.stop() },
    { name: 'printerProfiles', start: () => printerProfiles.start(), stop: () => printerProfiles.stop() },
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
    { name: 'power', start: () => power.start(), stop: () => power.stop() },
    { name: 'printer', start: () => printer.start(), stop: () => printer.stop() },
    { name: 'jobs', start: () => jobRunner.start(), stop: () => jobRunner.stop() },
    { name: 'timelapse', start: () => timelapse.start(), stop: async () => { for (const u of unbridgeTimelapse) u(); await timelapse.stop(); } },
    { name: 'recovery', start: () => journal.start(), stop: () => journal.stop() },
    { name: 'notifications', start: () => notifications.start(), stop: () => notifications.stop() },
    { name: 'bedMesh', start: () => bedMesh.start(), stop: async () => { unbridgeBedMesh(); await bedMesh.stop(); } },
    { name: 'layerProgress', start: () => layerProgress.start(), stop: () => layerProgress.stop() },
    { name: 'spools', start: () => spools.start(), stop: () => spools.stop() },
    { name: 'cancelObjects', start: () => cancelObjects.start(), stop: () => cancelObjects.stop() },
    { name: 'reconnect', start: () => autoReconnect.start(), stop: () => autoReconnect.stop() },
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

  const slice = createSliceCommand({ slicing, files, profiles: printerProfiles, jobs: jobRunner, logger: logger.child({ svc: 'slicing' }) });
  // From here on a failure (the port taken, the control file not writable) closes what opened since: the app (its
  // preClose hooks stop MQTT and detach push), then the services and the log.
  let app: GantryApp | undefined;
  let withdrawLocalControl: () => Promise<void>;
  let boundPort: number;
  let url: string;
  try {
    app = await buildApp({ config, paths, events, access, printerProfiles, slicing, slice, files, jobs: jobRunner, jobRunner, sdFiles, systemCommands, languagePacks, logFiles, timelapse, printer, ports, recovery: journal, notifications, bedMesh, power, layerProgress, spools, queue, cancelObjects,
      serialOptions: async () => ({ ports: await ports.listPorts(), baudrates: ports.baudrates() }), logger, version: VERSION });
    // MQTT: publishes from the event bus and printer listeners; API requests over MQTT run through the app's own routes.
    const service = new MqttService({
      config: config.slice('plugins', 'server', 'appearance', 'webcam'), events, clock, logger: logger.child({ svc: 'mqtt' }), version: VERSION, dispatch: createInjectDispatch(app, access),
      printer: {
        state: () => printer.state(), currentZ: () => printer.currentZ(), offsets: () => printer.offsets(), resends: () => printer.resends(),
        subscribe: (l) => printer.subscribe(l), watchReplies: (w) => printer.watchReplies(w),
        heaters: () => {
          const p = printerProfiles.getCurrentOrDefault();
          return { extruders: p.extruder.count, bed: p.heatedBed, chamber: p.heatedChamber };
        },
      },
      jobs: jobStatusFrom(jobRunner, () => []),
      fileMetadata: async (origin, path) => {
        if (origin !== 'local') return null;
        const f = await files.file(path);
        const { hashKey: _h, analysisKey: _a, ...meta } = f.meta;
        return { ...meta, display: f.display, hash: f.hash };
      },
    });
    mqtt = service;
    for (const early of earlyTopics.splice(0)) early.stop = service.topicLink.subscribe(early.topic, early.fn);
    let unbridgeMqttSlicing = (): void => {};
    // Stopped before the app closes so `disconnected` goes out and no API request arrives at a closing app (also
    // when its start failed half-way).
    app.addHook('preClose', async () => { unbridgeMqttSlicing(); await service.stop(); });
    await service.start();
    unbridgeMqttSlicing = slicing.onProgress((p) => service.slicingProgress(p));
    push.attach(app.server, (path) => moonraker !== undefined && MoonrakerService.claims(path));
    // Upgraded push sockets are not closed by the HTTP server; close them first so app.close() can finish.
    app.addHook('preClose', () => push.detach());
    if (moonraker) {
      registerMoonrakerRoutes(app, moonraker, moonraker.deps);
      moonraker.attach(app.server);
      app.addHook('preClose', () => moonraker.detach());
      const ui = config.current.moonraker.ui;
      if (ui) {
        const served = await registerUi(app, ui, config.current.moonraker.uiPath);
        if (served) logger.info({ ui: served.kind, at: served.mount }, 'serving a Moonraker UI');
        if (served?.warning) logger.warn({ ui: served.kind, at: served.mount }, served.warning);
        else logger.warn({ folder: ui }, 'moonraker.ui holds neither a Mainsail nor a Fluidd release');
      }
    }
    const host = opts.host ?? config.current.server.host;
    const port = opts.port ?? config.current.server.port;
    await app.listen({ host, port });
    const addr = app.server.address();
    boundPort = typeof addr === 'object' && addr ? addr.port : port;
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

  return { app: served, url, port: boundPort, paths, config, events, access, push, printerProfiles, slicing, printer, timelapse, mqtt: broker, moonraker, logger, stop, stopStage: () => stage };
}
