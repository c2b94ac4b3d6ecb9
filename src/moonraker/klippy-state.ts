// Klippy's state (`ready`, `startup`, `error`, `shutdown`) as Moonraker reports it, derived from the printer link's state.
import type { PrinterStateSnapshot } from '../printer/types.ts';

export type KlippyState = 'ready' | 'startup' | 'error' | 'shutdown';

const STARTING = new Set(['OPEN_SERIAL', 'DETECT_SERIAL', 'CONNECTING']);

export function klippyState(s: PrinterStateSnapshot): { state: KlippyState; message: string } {
  if (s.flags.operational) return { state: 'ready', message: 'Printer is ready' };
  if (STARTING.has(s.id)) return { state: 'startup', message: `Printer is connecting (${s.text})` };
  if (s.flags.error) return { state: 'error', message: `${s.error || s.text}\nFIRMWARE_RESTART reconnects the printer.` };
  // Closed: Klipper has no such state; `error` shows the UIs' restart buttons, and FIRMWARE_RESTART connects.
  return { state: 'error', message: 'The printer is not connected to Gantry.\nFIRMWARE_RESTART connects it.' };
}
