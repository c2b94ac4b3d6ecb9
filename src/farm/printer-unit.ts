// One printer as one unit: everything that belongs to one printer, built by one function from the farm's shared
// services and the printer's own config and folders, started and stopped by one call each (issue #52 point 1).
import { join } from 'node:path';
import type { ConfigStore } from '../config/config-store.ts';
import type { Paths } from '../config/paths.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { FileService } from '../files/file-service.ts';
import type { FileUsage, Origin } from '../files/types.ts';
import type { AnalysisOptions } from '../files/analysis/types.ts';
import { SdCardFiles } from '../files/sd-card.ts';
import { PRINTER_SECTIONS, PrinterService, type PortProvider } from '../printer/printer-service.ts';
import type { LinkThreadSpawner } from '../printer/link/worker-link.ts';
import { JobRunner } from '../printer/job/job-runner.ts';
import { PrintHistory } from '../printer/job/print-history.ts';
import { sdTransfer } from '../printer/job/sd-transfer.ts';
import { fileLineSource } from '../printer/job/file-line-source.ts';
import { PrinterProfiles } from '../printer/profiles/printer-profiles.ts';
import { FirmwareLimits } from '../printer/readings/firmware-limits.ts';
import { printerAnalysisOptions } from '../printer/profiles/analysis-options.ts';
import { PrintJournal } from '../recovery/print-journal.ts';
import { AutoReconnect } from '../recovery/auto-reconnect.ts';
import { TimelapseService } from '../timelapse/timelapse-service.ts';
import { EventSubscriptions } from '../event-actions/event-subscriptions.ts';
import { PowerService } from '../power/power-service.ts';
import type { PowerMqtt } from '../power/providers/mqtt-topics.ts';
import { LayerProgressService } from '../layer-progress/layer-progress-service.ts';
import { BedMeshService, visualizerBed, visualizerCells } from '../bed-mesh/bed-mesh-service.ts';
import { SpoolService } from '../spools/spool-service.ts';
import { CancelObjectService } from '../objects/cancel-object-service.ts';
import { mqttPrinterView } from '../mqtt/printer-view.ts';
import type { MqttPrinterSource } from '../mqtt/types.ts';
import { jobStatusFrom, type JobStatusSource } from '../push/sources.ts';

/** What a unit is built from: the shared services, and this printer's own config store, folders and name. */
export interface PrinterUnitDeps {
  /** The printer's name in the farm (`default` for the printer of a one-printer install). */
  name: string;
  /** This printer's settings (serial, scripts, events, webcam, printer profiles, recovery …); the default printer's is the main store. */
  config: ConfigStore;
  /** This printer's folders: profiles, scripts, data (history, recovery journal), logs (serial.log), timelapse. */
  paths: Paths;
  /** The bus its events go out on (the default printer's is the server's, so one-printer behaviour is unchanged). */
  events: EventBus;
  clock: Clock;
  logger: Logger;
  /** The shared file library. */
  files: FileService;
  /** Serial ports and transports as this printer's config sees them. */
  ports: (config: ConfigStore) => PortProvider;
  /** Starts a printer link thread (serial.linkThread: worker); absent, the link runs on the main thread. */
  spawnLinkThread?: LinkThreadSpawner;
  /** The broker session a power device's MQTT topics go through (the shared MQTT client, which may connect later). */
  mqtt: PowerMqtt;
}

/** A plugin message for this printer's push clients (power state, layer progress, bed mesh, spools, objects), with STATUS permission. */
export type PluginMessageListener = (plugin: string, data: unknown) => void;

interface Part {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** One printer: its parts, in the order they start (stop runs in reverse). */
export class PrinterUnit implements FileUsage {
  readonly name: string;
  readonly config: ConfigStore;
  readonly paths: Paths;
  readonly events: EventBus;
  readonly profiles: PrinterProfiles;
  readonly firmwareLimits = new FirmwareLimits();
  readonly ports: PortProvider;
  readonly printer: PrinterService;
  readonly jobs: JobRunner;
  readonly journal: PrintJournal;
  readonly reconnect: AutoReconnect;
  readonly sdFiles: SdCardFiles;
  readonly timelapse: TimelapseService;
  readonly eventSubscriptions: EventSubscriptions;
  /** Its power supply (PSU Control's API and settings). */
  readonly power: PowerService;
  /** Layer progress, the printer's screen, preheat (DisplayLayerProgress). */
  readonly layerProgress: LayerProgressService;
  /** Bed meshes probed on this printer (Bed Level Visualizer). */
  readonly bedMesh: BedMeshService;
  /** Spoolman: this printer's active spools and the filament its prints use (src/spools/). */
  readonly spools: SpoolService;
  /** Cancelling one object of this printer's print (src/objects/). */
  readonly cancelObjects: CancelObjectService;
  /** The push channel's view of this printer's job (its status source; the printer is `printer`). */
  readonly jobStatus: JobStatusSource;
  /** What MQTT publishes of this printer. */
  readonly mqttView: MqttPrinterSource;
  private readonly parts: Part[];
  private readonly started: Part[] = [];
  private readonly unwatch: Array<() => void> = [];
  private readonly pluginListeners = new Set<PluginMessageListener>();
  private stage: string | undefined;
  private readonly logger: Logger;

  constructor(deps: PrinterUnitDeps) {
    const { name, config, paths, events, clock, files } = deps;
    const logger = deps.logger.child({ printer: name });
    this.name = name;
    this.logger = logger;
    this.config = config;
    this.paths = paths;
    this.events = events;
    this.profiles = new PrinterProfiles(paths.printerProfiles, config.slice('printerProfiles'), events, logger.child({ svc: 'printerProfiles' }));
    this.ports = deps.ports(config);
    const ports = this.ports;
    this.printer = new PrinterService({
      config: config.slice(...PRINTER_SECTIONS), events, logger: logger.child({ svc: 'printer' }), profiles: this.profiles, ports: this.ports, logsDir: paths.logs, scriptsDir: paths.scripts,
      ...(deps.spawnLinkThread ? {
        linkThread: { spawn: deps.spawnLinkThread, config: config.slice('serial', 'devel').get, virtualSdFolder: null },
      } : {}),
      // The supply is switched on (and the port waited for) before a connect; power is built just below.
      beforeConnect: (o) => this.power.beforeConnect(o.port),
    });
    const printer = this.printer;
    this.unwatch.push(printer.watchReplies((line) => this.firmwareLimits.observe(line)));
    const scripts = printer.scriptSource;
    // The journal and the runner read each other (the journal the runner's live stream, the runner why a failed print
    // stopped): the journal's side reaches the runner through this unit, which holds both once constructed.
    this.journal = new PrintJournal({
      jobs: {
        live: () => this.jobs.live(), isReady: () => this.jobs.isReady(), isOperational: () => this.jobs.isOperational(),
        startRecovered: (path, offset, prologue, user) => this.jobs.startRecovered(path, offset, prologue, user),
      },
      files, temperatures: () => printer.temperatures(), events, logger: logger.child({ svc: 'recovery' }),
      now: () => clock.now() / 1000, dataDir: paths.data, scripts, config: config.slice('recovery'),
      // Cancel-object is built below: reached through this unit.
      objects: { cancelled: () => this.cancelObjects.cancelledIds(), restore: (path, ids, o) => this.cancelObjects.restore(path, ids, o) },
    });
    const journal = this.journal;
    this.jobs = new JobRunner({
      printer, files, events, clock, logger: logger.child({ svc: 'jobs' }),
      history: new PrintHistory(`${paths.data}/print-history.json`, logger.child({ svc: 'history' })),
      scripts,
      config: config.slice('serial'),
      interruption: (error) => journal.interruption(error),
      // Spools and cancel-object read the runner too: they are built below, and reached through this unit.
      beforeStart: (file) => this.spools.beforeStart(file),
      historyExtras: () => this.spools.historyExtras(),
      lineFilter: (path, offset) => this.cancelObjects.lineFilter(path, offset),
      cancelledObjects: () => this.cancelObjects.cancelledNames(),
    });
    const jobs = this.jobs;
    this.reconnect = new AutoReconnect({
      printer, ports: this.ports, journal, events, logger: logger.child({ svc: 'reconnect' }), config: config.slice('recovery'),
    });
    this.sdFiles = new SdCardFiles({
      printer, files, events, logger: logger.child({ svc: 'sdcard' }),
      transfer: (abs, remote) => sdTransfer(printer, abs, remote),
      afterTransfer: (remote, o) => jobs.select('sdcard', remote, { print: o.print, user: o.user }),
      isInUse: (remote) => jobs.isInUse('sdcard', remote),
      jobActive: () => jobs.isPrinting(),
    });
    this.eventSubscriptions = new EventSubscriptions({
      config: config.slice('events'), events, logger: logger.child({ svc: 'events' }), gcode: printer,
      context: { currentZ: () => printer.currentZ(), selectedFile: () => jobs.selected(), progress: () => jobs.snapshot().progress?.completion ?? null },
    });
    this.timelapse = new TimelapseService({
      config: config.slice('webcam', 'folder', 'feature'), events, clock, logger: logger.child({ svc: 'timelapse' }), moviesDir: paths.timelapse, baseDir: paths.base,
      printer, printing: () => jobs.isPrinting(),
    });
    const pushPlugin: PluginMessageListener = (plugin, data) => { for (const l of this.pluginListeners) l(plugin, data); };
    this.power = new PowerService({
      config: config.slice('plugins', 'serial', 'printerProfiles'), printer, events, logger: logger.child({ svc: 'power' }),
      push: (data) => pushPlugin('psucontrol', data), mqtt: deps.mqtt,
      waitForPort: async (port, ms) => {
        const until = Date.now() + ms;
        while (Date.now() < until && !(await ports.listPorts()).includes(port)) await new Promise((r) => setTimeout(r, 250));
      },
    });
    this.layerProgress = new LayerProgressService({
      config: config.slice('plugins'), jobs, events, logger: logger.child({ svc: 'layerProgress' }),
      printer: {
        state: () => printer.state(), currentZ: () => printer.currentZ(), temperatures: () => printer.temperatures(), isOperational: () => printer.isOperational(),
        commands: (lines) => printer.commands(lines),
        setTemperatures: (targets) => { for (const [heater, t] of Object.entries(targets)) printer.setTemperature(heater, t); },
      },
      absolutePath: (path) => files.absolutePath(path),
      push: (id, data) => pushPlugin(id, data),
    });
    const profiles = this.profiles;
    this.bedMesh = new BedMeshService({
      config: config.slice('plugins', 'appearance'), events, clock, logger: logger.child({ svc: 'bedMesh' }), printer, file: join(paths.data, 'bed-meshes.json'),
      bed: () => {
        const p = profiles.getCurrentOrDefault();
        return { id: p.id, width: p.volume.width, depth: p.volume.depth, height: p.volume.height, circular: p.volume.formFactor === 'circular' };
      },
    });
    this.spools = new SpoolService({
      config: config.slice('plugins'), events, logger: logger.child({ svc: 'spools' }), file: join(paths.data, 'spoolman.json'),
      jobs, absolutePath: (path) => files.absolutePath(path),
      hostWords: (word, fn) => printer.handleHostWord(word, fn),
      say: (line) => printer.hostSays(line),
      push: (data) => pushPlugin('spoolman', data),
    });
    this.cancelObjects = new CancelObjectService({
      config: config.slice('plugins'), events, logger: logger.child({ svc: 'cancelobject' }),
      objectsOf: async (path) => (await files.analysisOf(path))?.gantry?.objects ?? null,
      commands: (lines) => printer.commands(lines),
      cancelPrint: () => jobs.command('cancel'),
      filepos: () => jobs.snapshot().progress?.filepos ?? null,
      push: (data) => pushPlugin('cancelobject', data),
      fileLines: (path) => fileLinesOf(files, path),
    });
    // Bed Level Visualizer's UI gets the mesh as the plugin pushes it.
    this.unwatch.push(this.bedMesh.onMesh((m, bed) => pushPlugin('bedlevelvisualizer', { mesh: visualizerCells(m), bed: visualizerBed(bed) })));
    this.jobStatus = jobStatusFrom(jobs, () => [...jobs.busyFiles(), ...files.analysing().map(({ origin, path }) => ({ origin, path }))]);
    this.mqttView = mqttPrinterView(printer, this.profiles);
    const part = (n: string, s: { start(): Promise<void>; stop(): Promise<void> }): Part => ({ name: n, start: () => s.start(), stop: () => s.stop() });
    this.parts = [
      part('eventSubscriptions', this.eventSubscriptions),
      part('printerProfiles', this.profiles),
      part('power', this.power),
      part('printer', printer),
      part('jobs', jobs),
      part('timelapse', this.timelapse),
      part('recovery', journal),
      part('bedMesh', this.bedMesh),
      part('layerProgress', this.layerProgress),
      part('spools', this.spools),
      part('cancelObjects', this.cancelObjects),
      part('reconnect', this.reconnect),
    ];
  }

  /** Plugin messages for this printer's push clients; returns the way to stop listening. */
  onPluginMessage(listener: PluginMessageListener): () => void {
    this.pluginListeners.add(listener);
    return () => { this.pluginListeners.delete(listener); };
  }

  /** Starts the parts in order; a part that fails stops those started before it, and the error goes to the caller. */
  async start(): Promise<void> {
    try {
      for (const p of this.parts) {
        await p.start();
        this.started.push(p);
      }
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  /** Stops what started, in reverse order; a part that fails to stop is logged and the rest still stop. */
  async stop(): Promise<void> {
    for (const u of this.unwatch.splice(0)) u();
    for (const p of this.started.splice(0).reverse()) {
      this.stage = p.name;
      try {
        await p.stop();
      } catch (err) {
        this.logger.error({ err, part: p.name, printer: this.name }, 'printer part failed to stop');
      }
    }
    this.stage = undefined;
  }

  /** The part a stop under way waits for. */
  stopStage(): string | undefined {
    return this.stage;
  }

  /** Options for analysing an upload as this printer would print it (its current profile, its firmware's limits). */
  analysisOptions(): AnalysisOptions {
    return printerAnalysisOptions(this.profiles.getCurrentOrDefault(), this.firmwareLimits, this.config.current);
  }

  // FileUsage: whether this printer holds a file of the shared library.
  isInUse(origin: Origin, path: string): boolean {
    return this.jobs.isInUse(origin, path);
  }

  isPrinting(): boolean {
    return this.jobs.isPrinting();
  }

  released(origin: Origin, path: string): void {
    this.jobs.released(origin, path);
  }

  replaced(origin: Origin, path: string): void {
    this.jobs.replaced(origin, path);
  }
}

/** A stored file's lines from its start, in batches with the byte offset after each line (cancel-object reads them). */
async function* fileLinesOf(files: FileService, path: string): AsyncGenerator<{ lines: string[]; ends: number[] }> {
  yield* fileLineSource(await files.absolutePath(path));
}

/** Builds one printer unit (not started). A farm is several calls of this with the same shared services. */
export function buildPrinterUnit(deps: PrinterUnitDeps): PrinterUnit {
  return new PrinterUnit(deps);
}
