// One Moonraker endpoint per printer: `buildMoonraker` makes the edge over one printer unit's services (its printer,
// job runner, SD card, profiles, bed mesh, power, layers, spools, objects, its config and data folder) and the shared
// ones (access, the file library, the print queue, system commands); `mountMoonraker` puts its HTTP mirror and its
// websocket on an app, at the root (the default printer) or under a prefix (a farm printer: `/printer/NAME`).
import type { FastifyInstance } from 'fastify';
import type { ConfigStore } from '../config/config-store.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { AccessService } from '../access/access-service.ts';
import type { FileService } from '../files/file-service.ts';
import type { SdCardFiles } from '../files/sd-card.ts';
import type { SpoolService } from '../spools/spool-service.ts';
import type { CancelObjectService } from '../objects/cancel-object-service.ts';
import type { MachineProfile, MoonrakerDeps, MoonrakerJobs, MoonrakerPrinter } from './moonraker-deps.ts';
import type { MoonrakerBedMesh } from './bed-mesh-object.ts';
import type { MoonrakerPower } from './power-devices.ts';
import type { MoonrakerQueue } from './job-queue.ts';
import type { MoonrakerSystem } from './machine-methods.ts';
import { MoonrakerService } from './moonraker-service.ts';
import { registerMoonrakerRoutes } from './http-routes.ts';

/** What the edge takes of one printer unit (src/farm/printer-unit.ts `PrinterUnit` has all of it). */
export interface MoonrakerUnit {
  name: string;
  config: ConfigStore;
  paths: { data: string };
  events: EventBus;
  printer: MoonrakerPrinter;
  jobs: MoonrakerJobs;
  sdFiles: SdCardFiles;
  profiles: { getCurrentOrDefault(): MachineProfile };
  bedMesh: MoonrakerBedMesh;
  power: MoonrakerPower;
  layerProgress: { values(): Record<string, unknown> };
  spools: SpoolService;
  cancelObjects: CancelObjectService;
}

/** The services every printer's endpoint shares. */
export interface MoonrakerShared {
  access: AccessService;
  files: FileService;
  clock: Clock;
  logger: Logger;
  version: string;
  /** The print queue and the bus its events go out on (the job_queue component). */
  queue?: { service: MoonrakerQueue; events: EventBus };
  system?: MoonrakerSystem;
  tickMs?: number;
}

/** A number from DisplayLayerProgress's values (numbers or numeric strings), else null. */
const layerNumber = (v: unknown): number | null =>
  (typeof v === 'number' || (typeof v === 'string' && v.trim() !== '')) && Number.isFinite(Number(v)) ? Number(v) : null;

/** The deps of one printer's endpoint. */
export function moonrakerDepsFor(unit: MoonrakerUnit, shared: MoonrakerShared): MoonrakerDeps {
  const { config } = unit;
  return {
    config, events: unit.events, access: shared.access, printer: unit.printer, jobs: unit.jobs, files: shared.files, sdFiles: unit.sdFiles,
    clock: shared.clock, logger: shared.logger.child({ svc: 'moonraker', printer: unit.name }), version: shared.version,
    dataDir: unit.paths.data, profile: () => unit.profiles.getCurrentOrDefault(),
    bedMesh: unit.bedMesh, power: { service: unit.power, settings: () => config.current.plugins.psucontrol },
    layers: () => {
      const layer = (unit.layerProgress.values().layer ?? {}) as { total?: unknown; current?: unknown };
      return { total: layerNumber(layer.total), current: layerNumber(layer.current) };
    },
    spools: unit.spools,
    objects: unit.cancelObjects,
    ...(shared.queue ? { queue: { ...shared.queue, printer: unit.name } } : {}),
    ...(shared.system ? { system: shared.system } : {}),
    ...(shared.tickMs ? { tickMs: shared.tickMs } : {}),
  };
}

/** The edge of one printer (not started: its start/stop go with the other services). */
export function buildMoonraker(unit: MoonrakerUnit, shared: MoonrakerShared): MoonrakerService {
  return new MoonrakerService(moonrakerDepsFor(unit, shared));
}

/**
 * Puts the edge on the app: the HTTP mirror at `<prefix>/server/…`, `<prefix>/printer/…`, … and the websocket at
 * `<prefix>/websocket`; closing the app closes its sockets. `prefix` is '' or a path without trailing slash
 * (`/printer/NAME`). The push channel must leave the socket's path to it (`service.owns(path)`).
 */
export function mountMoonraker(app: FastifyInstance, service: MoonrakerService, opts: { prefix?: string } = {}): void {
  let prefix = opts.prefix ?? '';
  while (prefix.endsWith('/')) prefix = prefix.slice(0, -1);
  if (prefix && !/^(\/[A-Za-z0-9._~-]+)+$/.test(prefix)) throw new Error(`Invalid Moonraker prefix: ${prefix}`);
  registerMoonrakerRoutes(app, service, service.deps, prefix);
  service.attach(app.server, prefix);
  app.addHook('preClose', () => service.detach());
}
