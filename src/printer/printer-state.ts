// The printer's state as clients see it: the link's states (protocol/connection-state.ts) and the job's
// (job/job-lifecycle.ts) in one id, its display texts, the named sets and the flags of GET /api/printer.
import type { LinkStateId } from '../protocol/connection-state.ts';

/** The link's states, or while the link is Operational and a job runs, the job's (job/job-lifecycle.ts JobState). */
export type ConnectionStateId = LinkStateId
  | 'STARTING' | 'PRINTING' | 'PAUSING' | 'PAUSED' | 'RESUMING' | 'CANCELLING' | 'FINISHING' | 'TRANSFERING_FILE';

/** Display texts clients match on verbatim (Home Assistant, OctoApp), see docs/reference/printer-extra-api.md §6.1. */
export const STATE_TEXT: Record<ConnectionStateId, string> = {
  OFFLINE: 'Offline',
  NONE: 'Offline',
  OPEN_SERIAL: 'Opening serial connection',
  DETECT_SERIAL: 'Detecting serial connection',
  CONNECTING: 'Connecting',
  OPERATIONAL: 'Operational',
  STARTING: 'Starting',
  PRINTING: 'Printing',
  PAUSING: 'Pausing',
  PAUSED: 'Paused',
  RESUMING: 'Resuming',
  CANCELLING: 'Cancelling',
  FINISHING: 'Finishing',
  TRANSFERING_FILE: 'Transferring file to SD',
  ERROR: 'Error',
  CLOSED: 'Offline',
  CLOSED_WITH_ERROR: 'Offline after error',
};

const set = (...ids: ConnectionStateId[]): ReadonlySet<ConnectionStateId> => new Set(ids);

export const OPERATIONAL_STATES = set('OPERATIONAL', 'STARTING', 'PRINTING', 'PAUSING', 'PAUSED', 'RESUMING',
  'CANCELLING', 'FINISHING', 'TRANSFERING_FILE');
/** The `printing` flag: note Paused is not in it. */
export const PRINTING_STATES = set('STARTING', 'PRINTING', 'CANCELLING', 'PAUSING', 'RESUMING', 'FINISHING');
/** A job exists (printing or paused): commands that would disturb it are refused. */
export const BUSY_STATES = set('STARTING', 'PRINTING', 'CANCELLING', 'PAUSING', 'PAUSED', 'RESUMING', 'FINISHING',
  'TRANSFERING_FILE');
export const ERROR_STATES = set('ERROR', 'CLOSED_WITH_ERROR');
export const CLOSED_STATES = set('OFFLINE', 'NONE', 'CLOSED', 'CLOSED_WITH_ERROR', 'ERROR');
/** A link is being set up or is up: a second connect must first disconnect. */
export const LINK_ACTIVE_STATES = set('OPEN_SERIAL', 'DETECT_SERIAL', 'CONNECTING', ...OPERATIONAL_STATES);

export interface StateFlags {
  operational: boolean;
  printing: boolean;
  cancelling: boolean;
  pausing: boolean;
  resuming: boolean;
  finishing: boolean;
  closedOrError: boolean;
  error: boolean;
  paused: boolean;
  ready: boolean;
  sdReady: boolean;
}

export function stateFlags(id: ConnectionStateId, sdReady: boolean): StateFlags {
  const operational = OPERATIONAL_STATES.has(id);
  return {
    operational,
    printing: PRINTING_STATES.has(id),
    cancelling: id === 'CANCELLING',
    pausing: id === 'PAUSING',
    resuming: id === 'RESUMING',
    finishing: id === 'FINISHING',
    closedOrError: CLOSED_STATES.has(id),
    error: ERROR_STATES.has(id),
    paused: id === 'PAUSED',
    ready: operational && !BUSY_STATES.has(id),
    sdReady,
  };
}
