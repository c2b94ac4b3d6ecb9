// Klipper's `bed_mesh` object and its commands over Gantry's bed mesh (src/bed-mesh/): the latest probed mesh is the
// profile `default` (as a BED_MESH_CALIBRATE leaves it in Klipper), the older ones in the history are profiles named
// by their id; BED_MESH_CALIBRATE runs the bed mesh service's probe and resolves when the mesh has been read;
// BED_MESH_PROFILE LOAD=default / BED_MESH_CLEAR switch the firmware's levelling on / off (M420 S1 / S0); REMOVE drops
// a mesh from the history. Marlin keeps one mesh, the last probed, so only `default` can be loaded into it.
import type { BedMesh } from '../bed-mesh/bed-mesh-service.ts';
import { RpcError } from './rpc-errors.ts';

export const DEFAULT_PROFILE = 'default';

/** What the edge uses of the bed mesh service (BedMeshService satisfies it). */
export interface MoonrakerBedMesh {
  latest(): BedMesh | null;
  history(): BedMesh[];
  probe(): void;
  probing(): boolean;
  remove(id: string): Promise<boolean>;
  onMesh(fn: (m: BedMesh) => void): () => void;
}

/** What the commands do to the printer. */
export interface MeshCommandHost {
  send(lines: string[]): void;
  settled(): Promise<void>;
}

const CALIBRATE_WAIT_MS = 15 * 60_000;
/** bed-mesh-service.ts: the same values again within this long are the same mesh. */
const REPEAT_MS = 60_000;

function meshParams(m: BedMesh): Record<string, unknown> {
  return { min_x: m.x[0], max_x: m.x.at(-1), min_y: m.y[0], max_y: m.y.at(-1), x_count: m.x.length, y_count: m.y.length,
    mesh_x_pps: 0, mesh_y_pps: 0, algo: 'direct', tension: 0.2 };
}

export class BedMeshObject {
  /** BED_MESH_CLEAR: no mesh active until a calibrate or a LOAD. */
  private cleared = false;

  constructor(private readonly mesh: MoonrakerBedMesh) {}

  /** Profile name → mesh: the latest is `default`, older ones by id. */
  private profiles(): Map<string, BedMesh> {
    const out = new Map<string, BedMesh>();
    this.mesh.history().forEach((m, i) => out.set(i === 0 ? DEFAULT_PROFILE : m.id, m));
    return out;
  }

  status(): Record<string, unknown> {
    const profiles: Record<string, unknown> = {};
    for (const [name, m] of this.profiles()) profiles[name] = { points: m.z, mesh_params: meshParams(m) };
    const active = this.cleared ? null : this.mesh.latest();
    if (!active) return { profile_name: '', mesh_min: [0, 0], mesh_max: [0, 0], probed_matrix: [[]], mesh_matrix: [[]], profiles };
    // No interpolation: the mesh shown is the probed grid, as the firmware holds it.
    return { profile_name: DEFAULT_PROFILE, mesh_min: [active.x[0], active.y[0]], mesh_max: [active.x.at(-1), active.y.at(-1)],
      probed_matrix: active.z, mesh_matrix: active.z, profiles };
  }

  /** configfile's `bed_mesh` section (its presence lights the UIs' height map). */
  settings(): Record<string, unknown> {
    const m = this.mesh.latest();
    return m
      ? { mesh_min: [m.x[0], m.y[0]], mesh_max: [m.x.at(-1), m.y.at(-1)], probe_count: [m.x.length, m.y.length], algorithm: 'direct' }
      : { probe_count: [3, 3], algorithm: 'direct' };
  }

  async calibrate(): Promise<void> {
    // First: a refused probe (not connected, printing, one running) throws here, before anything waits for a mesh.
    this.mesh.probe();
    await new Promise<void>((resolve, reject) => {
      const off = this.mesh.onMesh(() => { clearInterval(watch); off(); resolve(); });
      const since = Date.now();
      // The service gives up after its timeout (probing() turns false without a mesh): so does the command.
      const watch = setInterval(() => {
        if (this.mesh.probing() && Date.now() - since < CALIBRATE_WAIT_MS) return;
        clearInterval(watch);
        off();
        // The service keeps a repeat of a mesh less than a minute old as that mesh (no new one is told): read all the same.
        const last = this.mesh.latest();
        if (!this.mesh.probing() && last && last.time >= since - REPEAT_MS) return resolve();
        reject(new RpcError(400, 'Error on \'BED_MESH_CALIBRATE\': the probe gave no mesh'));
      }, 500);
      watch.unref();
    });
    this.cleared = false;
  }

  async profile(params: Map<string, string>, host: MeshCommandHost): Promise<string[]> {
    const profiles = this.profiles();
    const load = params.get('LOAD');
    const remove = params.get('REMOVE');
    if (load !== undefined) {
      if (!profiles.has(load)) throw new RpcError(400, `bed_mesh: Unknown profile [${load}]`);
      if (load !== DEFAULT_PROFILE) throw new RpcError(400, `bed_mesh: Marlin holds only the last probed mesh; profile [${load}] is kept for viewing, load [${DEFAULT_PROFILE}]`);
      host.send(['M420 S1']);
      await host.settled();
      this.cleared = false;
      return [`// bed_mesh: profile [${load}] loaded`];
    }
    if (remove !== undefined) {
      const m = profiles.get(remove);
      if (!m) throw new RpcError(400, `bed_mesh: Unknown profile [${remove}]`);
      await this.mesh.remove(m.id);
      return [`// bed_mesh: profile [${remove}] removed`];
    }
    if (params.has('SAVE')) throw new RpcError(400, 'bed_mesh: every probed mesh is kept already (the latest is [default])');
    throw new RpcError(400, 'Error on \'BED_MESH_PROFILE\': give LOAD=, REMOVE= or SAVE=');
  }

  async clear(host: MeshCommandHost): Promise<void> {
    host.send(['M420 S0']);
    await host.settled();
    this.cleared = true;
  }
}
