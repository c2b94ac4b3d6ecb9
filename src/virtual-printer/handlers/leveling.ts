// Bed levelling: G29 probes (and prints the grid, as Marlin's bilinear and MBL do; UBL prints on G29 T), M420 V prints
// the stored mesh, Prusa's G80/G81 and Klipper's BED_MESH_CALIBRATE/BED_MESH_OUTPUT the same in their own layouts.
import type { Firmware, HandlerTable } from './registry.ts';
import { has } from './registry.ts';
import { meshReport, probe, type MeshFormat, type ProbedMesh } from '../bed-shape.ts';

/** The mesh each simulated board has probed (a real board keeps it in RAM, or EEPROM after M500). */
const probed = new WeakMap<Firmware, ProbedMesh>();

/** A probe touches each point: a few hundred simulated ms each. */
async function runProbe(fw: Firmware): Promise<ProbedMesh> {
  await fw.planner.drained();
  const mesh = probe(fw.opts.bedShape);
  await fw.scheduler.sleep(250 * mesh.xs.length * mesh.ys.length);
  fw.state.pos.z = 5;
  probed.set(fw, mesh);
  return mesh;
}

function print(fw: Firmware, format: MeshFormat): void {
  const mesh = probed.get(fw);
  if (!mesh) {
    fw.send('echo:Invalid mesh.');
    return;
  }
  for (const line of meshReport(format, mesh)) fw.send(line);
}

export const levelingHandlers: HandlerTable = {
  G29: {
    description: 'Probe the bed (G29 T: print the UBL topography without probing)',
    keepAlive: true,
    run: async (fw, cmd) => {
      const format = fw.opts.bedShape.format;
      if (has(cmd, 'T') && probed.has(fw)) return print(fw, format);
      await runProbe(fw);
      if (format !== 'ubl' || has(cmd, 'T')) print(fw, format);
    },
  },
  M420: {
    description: 'Bed levelling state (V: print the stored mesh)',
    run: (fw, cmd) => {
      if (has(cmd, 'V')) print(fw, fw.opts.bedShape.format);
      fw.send(`echo:Bed Leveling ${probed.has(fw) ? 'ON' : 'OFF'}`);
    },
  },
  G80: { description: 'Prusa mesh bed levelling: probe', keepAlive: true, run: async (fw) => { await runProbe(fw); } },
  G81: { description: 'Prusa: print the mesh', run: (fw) => print(fw, 'prusa') },
  BED_MESH_CALIBRATE: { description: 'Klipper: probe the mesh', keepAlive: true, run: async (fw) => { await runProbe(fw); } },
  BED_MESH_OUTPUT: { description: 'Klipper: print the mesh', run: (fw) => print(fw, 'klipper') },
};
