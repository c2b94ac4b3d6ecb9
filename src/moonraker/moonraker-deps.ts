// What the Moonraker edge uses of the host, as ports (main.ts builds them from the services): the printer and job
// interfaces of printer/types.ts and printer/job-types.ts, the files service, access, and the printer profile.
import type { CancelObjectService } from '../objects/cancel-object-service.ts';
import type { ConfigStore } from '../config/config-store.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { AccessService } from '../access/access-service.ts';
import type { FileService } from '../files/file-service.ts';
import type { SdCardFiles } from '../files/sd-card.ts';
import type { Printer } from '../printer/types.ts';
import type { JobControl, JobSnapshot } from '../printer/job/job-types.ts';
import type { PrintHistoryEntry } from '../printer/job/print-history.ts';
import type { MoonrakerBedMesh } from './bed-mesh-object.ts';
import type { MoonrakerPower, PowerKind } from './power-devices.ts';
import type { SpoolService } from '../spools/spool-service.ts';
import type { MoonrakerQueue } from './job-queue.ts';
import type { MoonrakerSystem } from './machine-methods.ts';

/** The parts of the printer profile the synthetic Klipper config is made from. */
export interface MachineProfile {
  name: string;
  volume: { width: number; depth: number; height: number; formFactor: 'rectangular' | 'circular'; origin: 'lowerleft' | 'center' };
  heatedBed: boolean;
  heatedChamber: boolean;
  extruder: { count: number; nozzleDiameter: number; filamentDiameter?: number };
  axes: { x: { speed: number }; y: { speed: number }; z: { speed: number }; e: { speed: number } };
  machineLimits?: { maxAcceleration?: { x?: number }; printAcceleration?: number };
}

/** One finished print as the print history keeps it (the fields Moonraker's history shows). */
export type HistoryRecord = Pick<PrintHistoryEntry, 'origin' | 'path' | 'name' | 'start' | 'end' | 'duration' | 'result' | 'user'>;

/** The job runner, as far as Moonraker's print verbs and objects use it. */
export interface MoonrakerJobs extends JobControl {
  snapshot(): JobSnapshot;
  command(command: string, opts?: { action?: string; user?: string }): Promise<void>;
  printHistory(): Promise<HistoryRecord[]>;
}

export interface MoonrakerPrinter extends Printer {
  firmwareName(): string;
}

export interface MoonrakerDeps {
  config: ConfigStore;
  events: EventBus;
  access: AccessService;
  printer: MoonrakerPrinter;
  jobs: MoonrakerJobs;
  files: FileService;
  sdFiles?: SdCardFiles;
  profile: () => MachineProfile;
  /** Where the database file lives (`<data>/moonraker-db.json`). */
  dataDir: string;
  clock: Clock;
  logger: Logger;
  version: string;
  /** The bed mesh (the `bed_mesh` object, BED_MESH_* commands), when the host has it. */
  bedMesh?: MoonrakerBedMesh;
  /** Power control (the `power` component) and its settings, when the host has it. */
  power?: { service: MoonrakerPower; settings: () => PowerKind };
  /** The running job's layers (Gantry's layer progress), for print_stats.info; null where unknown. */
  layers?: () => { total: number | null; current: number | null };
  /** Spoolman (src/spools/): the `server.spoolman.*` methods and their notifications. */
  spools?: SpoolService;
  /** Status tick in ms (Klipper's cadence: 250). */
  tickMs?: number;
  /** Cancel-object (src/objects/): the `exclude_object` printer object and the EXCLUDE_OBJECT macro. */
  objects?: CancelObjectService;
  /** The print queue (the `job_queue` component), the bus its events go out on, and this printer's name in it. */
  queue?: { service: MoonrakerQueue; events: EventBus; printer: string };
  /** System commands (machine.reboot/shutdown, server.restart, machine.services.*). */
  system?: MoonrakerSystem;
}
