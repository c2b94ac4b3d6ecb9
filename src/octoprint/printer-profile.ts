// OctoPrint's printer profile on the wire (/api/printerprofiles): the normalised profile plus resource, default, current.
import { Type } from '../config/typebox.ts';
import type { Static } from 'typebox';
import { AnyJson } from './schema-kit.ts';

const Axis = Type.Object({ speed: Type.Number(), inverted: Type.Boolean() });
const AxisValues = Type.Object({ x: Type.Optional(Type.Number()), y: Type.Optional(Type.Number()), z: Type.Optional(Type.Number()),
  e: Type.Optional(Type.Number()) });

/** Profiles are normalised on load and save (src/printer/profiles/printer-profiles.ts), so the shape is closed. */
export const PrinterProfileSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  model: Type.String(),
  color: Type.String(),
  volume: Type.Object({
    width: Type.Number(), depth: Type.Number(), height: Type.Number(), formFactor: Type.String(), origin: Type.String(),
    /** false, or the box {x_min, y_min, z_min, x_max, y_max, z_max}. */
    custom_box: AnyJson,
  }),
  heatedBed: Type.Boolean(),
  heatedChamber: Type.Boolean(),
  extruder: Type.Object({
    count: Type.Number(),
    offsets: Type.Array(Type.Array(Type.Number())),
    nozzleDiameter: Type.Number(),
    sharedNozzle: Type.Boolean(),
    defaultExtrusionLength: Type.Number(),
    filamentDiameter: Type.Optional(Type.Number()),
  }),
  axes: Type.Object({ x: Axis, y: Axis, z: Axis, e: Axis }),
  machineLimits: Type.Optional(Type.Object({
    maxFeedrate: Type.Optional(AxisValues), maxAcceleration: Type.Optional(AxisValues), jerk: Type.Optional(AxisValues),
    printAcceleration: Type.Optional(Type.Number()), retractAcceleration: Type.Optional(Type.Number()),
    travelAcceleration: Type.Optional(Type.Number()), junctionDeviation: Type.Optional(Type.Number()),
  })),
  resource: Type.String(),
  default: Type.Boolean(),
  current: Type.Boolean(),
});

export type PrinterProfileWire = Static<typeof PrinterProfileSchema>;
export const PrinterProfileListSchema = Type.Object({ profiles: Type.Object({}, { additionalProperties: PrinterProfileSchema }) });
export const PrinterProfileReplySchema = Type.Object({ profile: PrinterProfileSchema });
