// Connection and job states of the printer as data: ids, display texts, the named sets and the link's allowed moves.

export type ConnectionStateId =
  | 'OFFLINE' | 'NONE' | 'OPEN_SERIAL' | 'DETECT_SERIAL' | 'CONNECTING' | 'OPERATIONAL'
  | 'STARTING' | 'PRINTING' | 'PAUSING' | 'PAUSED' | 'RESUMING' | 'CANCELLING' | 'FINISHING'
  | 'TRANSFERING_FILE' | 'ERROR' | 'CLOSED' | 'CLOSED_WITH_ERROR';

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

/** Texts that differ while the firmware itself prints from SD, or while a file is streamed to SD. */
export const SD_STATE_TEXT: Partial<Record<ConnectionStateId, string>> = {
  STARTING: 'Starting print from SD',
  PRINTING: 'Printing from SD',
};
export const TRANSFER_STATE_TEXT: Partial<Record<ConnectionStateId, string>> = {
  STARTING: 'Starting to send file to SD',
  PRINTING: 'Sending file to SD',
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

/** The link's own states (the engine's); job states (Starting … Finishing) are the printer's (printer/job/job-lifecycle.ts). */
export type LinkStateId = 'OFFLINE' | 'NONE' | 'OPEN_SERIAL' | 'DETECT_SERIAL' | 'CONNECTING' | 'OPERATIONAL' | 'ERROR' | 'CLOSED'
  | 'CLOSED_WITH_ERROR';

const LINK_OPEN: readonly LinkStateId[] = ['OPEN_SERIAL', 'DETECT_SERIAL', 'CONNECTING', 'OPERATIONAL'];

/** Allowed moves of the link. Error and close are reachable from every open state; the table lists the rest. */
export const LINK_TRANSITIONS: Record<LinkStateId, readonly LinkStateId[]> = {
  OFFLINE: ['OPEN_SERIAL', 'DETECT_SERIAL'],
  NONE: ['OPEN_SERIAL', 'DETECT_SERIAL'],
  OPEN_SERIAL: ['CONNECTING', 'DETECT_SERIAL'],
  DETECT_SERIAL: ['CONNECTING', 'OPERATIONAL'],
  CONNECTING: ['OPERATIONAL'],
  OPERATIONAL: [],
  ERROR: ['CLOSED_WITH_ERROR'],
  CLOSED: ['OPEN_SERIAL', 'DETECT_SERIAL'],
  CLOSED_WITH_ERROR: ['OPEN_SERIAL', 'DETECT_SERIAL'],
};

export function canLinkTransition(from: LinkStateId, to: LinkStateId): boolean {
  if (from === to) return true;
  if ((to === 'ERROR' || to === 'CLOSED' || to === 'CLOSED_WITH_ERROR') && LINK_OPEN.includes(from)) return true;
  if (to === 'CLOSED' && from === 'ERROR') return true;
  return LINK_TRANSITIONS[from].includes(to);
}

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
