// OctoPrint's temperature vocabulary: a heater's reading and the history points of /api/printer, /tool, /bed, /chamber.
import { Type } from '../config/typebox.ts';
import { Nullable } from './schema-kit.ts';

/** One heater now: actual and target are null until the firmware reported them. */
export const HeaterReadingSchema = Type.Object({ actual: Nullable('number'), target: Nullable('number'), offset: Type.Number() });

const PointReading = Type.Object({ actual: Nullable('number'), target: Nullable('number') });

/** One history point: `time` (unix seconds) and one `{actual, target}` per heater that reported. */
export const HistoryPointSchema = Type.Object({ time: Type.Number() }, { additionalProperties: PointReading });

/** A reading per heater (tool0..n, bed, chamber, other sensors), and `history` when it was asked for. */
export const TemperaturesSchema = Type.Object({ history: Type.Optional(Type.Array(HistoryPointSchema)) }, { additionalProperties: HeaterReadingSchema });

/** /api/printer/tool: the tools' readings, and their history when asked for (points without `time`, as OctoPrint's). */
export const ToolReplySchema = Type.Object({ history: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: PointReading }))) },
  { additionalProperties: HeaterReadingSchema });

/** /api/printer/bed or /chamber: that heater's reading, and its history when asked for (points without `time`). */
export const heaterReplySchema = (heater: 'bed' | 'chamber') => Type.Object({
  [heater]: Type.Optional(HeaterReadingSchema),
  history: Type.Optional(Type.Array(Type.Object({ [heater]: PointReading }))),
});
