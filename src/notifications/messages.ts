// What a notification says: the events Gantry notifies about (OctoPrint's names, plus PrintProgress, PrintLayer and the
// farm's QueueWaitingForBedClear), their default
// title and body, and the placeholders a template may use.
import type { Plain } from '../core/plain.ts';

export interface MessageTemplate { title: string; body: string }

/** The default messages; `plugins.notifications.messages.<Event>` overrides either part. */
export const DEFAULT_MESSAGES: Readonly<Record<string, MessageTemplate>> = {
  PrintStarted: { title: '{printer}: print started', body: 'Printing {file}.' },
  PrintDone: { title: '{printer}: print done', body: '{file} finished after {time}.' },
  PrintFailed: { title: '{printer}: print failed', body: '{file} failed after {time}: {error}' },
  PrintCancelled: { title: '{printer}: print cancelled', body: '{file} was cancelled after {time}.' },
  PrintPaused: { title: '{printer}: print paused', body: '{file} is paused at {progress} %.' },
  PrintResumed: { title: '{printer}: print resumed', body: 'Printing {file} again.' },
  FilamentChange: { title: '{printer}: filament change', body: 'The printer asks for a filament change (M600) while printing {file}.' },
  PrintProgress: { title: '{printer}: {progress} %', body: '{file} is {progress} % done, {left} left.' },
  PrintLayer: { title: '{printer}: layer {layer}', body: '{file} reached layer {layer} of {layers} ({progress} %).' },
  QueueWaitingForBedClear: { title: '{printer}: clear the bed', body: 'The print queue waits for the bed to be cleared before {file}.' },
  PrintRecoveryAvailable: { title: '{printer}: print interrupted', body: '{file} was interrupted ({reason}); it can be resumed from the UI.' },
  Error: { title: '{printer}: printer error', body: '{error}' },
  Disconnected: { title: '{printer}: printer disconnected', body: 'The printer link closed.' },
  MovieDone: { title: '{printer}: timelapse ready', body: 'The timelapse {movie} has been rendered.' },
  Test: { title: '{printer}: test notification', body: 'Notifications from Gantry reach this target.' },
};

/** Which events carry a snapshot when a target asks for one: those where a picture of the bed says something. */
export const SNAPSHOT_EVENTS: ReadonlySet<string> = new Set(['PrintStarted', 'PrintDone', 'PrintFailed', 'PrintCancelled',
  'PrintPaused', 'FilamentChange', 'PrintProgress', 'PrintLayer', 'PrintRecoveryAvailable', 'QueueWaitingForBedClear', 'Error', 'Test']);

export const NOTIFY_TYPE: Readonly<Record<string, 'info' | 'success' | 'warning' | 'failure'>> = {
  PrintDone: 'success', MovieDone: 'success', PrintFailed: 'failure', Error: 'failure', Disconnected: 'warning',
  PrintCancelled: 'warning', PrintPaused: 'warning', FilamentChange: 'warning', PrintRecoveryAvailable: 'warning',
  QueueWaitingForBedClear: 'warning',
};

/** 3725 s → "1h 02m", 75 → "1m 15s". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return 'unknown time';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** The placeholder values of one event: each template can use any of them; an unknown `{name}` stays as written. */
export function placeholders(event: string, payload: Plain, printer: string, extra: Plain = {}): Record<string, string> {
  const text = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : fallback);
  return {
    event,
    printer,
    file: text(payload.name, text(payload.path, text(payload.gcode, 'the file'))),
    path: text(payload.path),
    time: formatDuration(typeof payload.time === 'number' ? payload.time : null),
    reason: text(payload.reason, text(payload.cause, 'unknown reason')),
    error: text(payload.error, text(payload.reason, 'unknown error')),
    movie: text(payload.movie_basename, text(payload.movie)),
    progress: text(extra.progress, '?'),
    left: text(extra.left, 'unknown time'),
    layer: text(extra.layer, '?'),
    layers: text(extra.layers, '?'),
  };
}

/** `{name}` → its value; braces around an unknown name are kept, so a typo shows in the message instead of vanishing. */
export function render(template: string, values: Record<string, string>): string {
  return template.replace(/\{([a-z_]{1,32})\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? values[name] : whole));
}
