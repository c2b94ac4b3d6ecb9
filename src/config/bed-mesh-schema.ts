// Settings of the bed-mesh service: `plugins.bedmesh` — the probe commands, how many meshes are kept, how long a
// probe may take.
import { Type } from './typebox.ts';

export const BedMeshSection = Type.Object({
  command: Type.String({ default: '', maxLength: 4096, description: 'Probe commands, one per line (empty: by firmware — Marlin G28, G29, M420 S1 V; Prusa G28, G80, G81)' }),
  historySize: Type.Integer({ default: 20, minimum: 1, maximum: 500, description: 'Meshes kept per printer (the oldest go first)' }),
  timeout: Type.Integer({ default: 1800, minimum: 10, maximum: 7200, description: 'Seconds a probe may take before it is given up' }),
}, { default: {}, additionalProperties: true, description: 'Bed mesh (Gantry, built in)' });
