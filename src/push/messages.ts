// Push wire vocabulary: builds the OctoPrint message objects (`connected`, `event`, `current`, ...) and decides which
// permissions each message needs. Single-key JSON objects; serialised once and shared wherever possible.
import { createHash } from 'node:crypto';
import { PERMISSIONS } from '../access/permissions.ts';
import { permissionRecord } from '../octoprint/access-records.ts';
import { OCTOPRINT_COMPAT_VERSION } from '../octoprint/version.ts';
import { PAYLOADLESS_EVENTS, isScriptEvent } from '../core/events.ts';
import type { StatusDelta } from './status-monitor.ts';
import { filterLines, type LineFilter } from './subscription.ts';

/** The OctoPrint release whose push protocol we speak (clients gate features on it). */
export const COMPAT_VERSION = OCTOPRINT_COMPAT_VERSION;

export type MessageType = 'connected' | 'reauthRequired' | 'history' | 'current' | 'event' | 'timelapse'
  | 'slicingProgress' | 'renderProgress' | 'plugin';

/** One serialised server message, shared by every client it goes to (UTF-8 encoded once, on first need). */
export class OutMessage {
  private bytes: Buffer | undefined;
  constructor(readonly text: string) {}
  get buffer(): Buffer {
    return (this.bytes ??= Buffer.from(this.text, 'utf8'));
  }
}

export const encode = (type: MessageType, payload: unknown): OutMessage => new OutMessage(JSON.stringify({ [type]: payload }));

export function permissionRecords(): Array<Record<string, unknown>> {
  return PERMISSIONS.map((p) => permissionRecord(p.key));
}

export function connectedPayload(opts: { configHash: string; debug: boolean }): Record<string, unknown> {
  return {
    version: COMPAT_VERSION,
    display_version: COMPAT_VERSION,
    branch: null,
    // Clients only display it; we run on Node.js, so say which one.
    python_version: process.versions.node,
    // No UI plugins are installed: the hash of the empty list, stable across restarts.
    plugin_hash: createHash('md5').update('').digest('hex'),
    config_hash: opts.configHash,
    debug: opts.debug,
    safe_mode: null,
    online: true,
    permissions: permissionRecords(),
  };
}

/** Whether an event reaches push clients at all (script events are internal). */
export const isPushedEvent = (name: string): boolean => !isScriptEvent(name);

/** Events only administrators see. */
export const ADMIN_ONLY_EVENTS: ReadonlySet<string> = new Set(['UserLoggedIn', 'UserLoggedOut']);
/** Events whose payload non-administrators get as `{}`. */
export const ADMIN_PAYLOAD_EVENTS: ReadonlySet<string> = new Set(['ClientOpened', 'ClientAuthed']);

export function eventPayload(name: string, payload: unknown): unknown {
  if (PAYLOADLESS_EVENTS.has(name) || payload === undefined) return null;
  return payload;
}

export interface CurrentView {
  /** MONITOR_TERMINAL: without it `logs`/`messages` keys are left out. */
  terminal: boolean;
  logs: LineFilter;
  messages: LineFilter;
}

/** `current` for one client from the deltas it has not seen yet (oldest first; usually just one). */
export function currentPayload(deltas: readonly StatusDelta[], view: CurrentView, serverTime?: number): Record<string, unknown> {
  const last = deltas[deltas.length - 1];
  const out: Record<string, unknown> = {
    state: last.base.state, job: last.base.job, progress: last.base.progress, currentZ: last.base.currentZ,
    offsets: last.base.offsets, resends: last.base.resends, markings: last.base.markings, busyFiles: last.base.busyFiles,
    temps: deltas.length === 1 ? last.temps : deltas.flatMap((d) => d.temps),
  };
  if (view.terminal) {
    const logs = deltas.length === 1 ? last.logs : deltas.flatMap((d) => d.logs);
    const messages = deltas.length === 1 ? last.messages : deltas.flatMap((d) => d.messages);
    out.logs = filterLines(logs, view.logs);
    out.messages = filterLines(messages, view.messages);
  }
  out.serverTime = serverTime ?? last.serverTime;
  return out;
}

/** `history` as one client may see it. */
export function historyPayload(h: Record<string, unknown> & { logs: string[]; messages: string[] }, view: CurrentView): Record<string, unknown> {
  const { logs, messages, ...rest } = h;
  if (!view.terminal) return rest;
  return { ...rest, logs: filterLines(logs, view.logs), messages: filterLines(messages, view.messages) };
}
