// OctoPrint's printer state vocabulary: the `state` object (text, flags, error) of /api/printer and push `current`.
import { Type } from '../config/typebox.ts';
import { STATE_TEXT, stateFlags } from '../printer/printer-state.ts';
import type { PrinterStateSnapshot } from '../printer/types.ts';

export interface StateWire { text: string; flags: Record<string, boolean>; error: string }

/** What a host without a printer link reports. */
export const OFFLINE_STATE: PrinterStateSnapshot = { id: 'OFFLINE', text: STATE_TEXT.OFFLINE, flags: stateFlags('OFFLINE', false), error: '' };

/** The wire `state`; flags are copied so a later change of the snapshot cannot alter an answer already built. */
export function stateWire(s: PrinterStateSnapshot): StateWire {
  return { text: s.text, flags: { ...s.flags }, error: s.error };
}

const FLAG_NAMES = ['operational', 'printing', 'cancelling', 'pausing', 'resuming', 'finishing', 'closedOrError', 'error', 'paused',
  'ready', 'sdReady'] as const;

export const StateFlagsSchema = Type.Object(Object.fromEntries(FLAG_NAMES.map((k) => [k, Type.Boolean()])), { additionalProperties: true });
export const StateSchema = Type.Object({ text: Type.String(), flags: StateFlagsSchema, error: Type.String() });
