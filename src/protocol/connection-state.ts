// The link's own states as data: ids and allowed moves (the engine's). The printer's state, job states and display
// texts included, is the printer's (printer/printer-state.ts).

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
