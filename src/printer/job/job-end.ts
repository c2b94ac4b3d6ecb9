// What a job leaves behind when it ends: its Print* end events in OctoPrint's order, its print history entry and the
// file's print statistics.
import type { EventBus } from '../../core/event-bus.ts';
import type { EventPosition, JobEventPayload } from '../../core/events.ts';
import type { FileService } from '../../files/file-service.ts';
import type { PrintHistory, PrintHistoryEntry } from './print-history.ts';
import type { JobOutcome, Position } from '../types.ts';
import { NULL_POSITION, type ActiveJob } from './active-job.ts';

/** The print history entry and, for a local file, its print statistics. */
export async function recordEnd(deps: { history: PrintHistory; files: FileService; historyExtras?: () => Pick<PrintHistoryEntry, 'spools'>; cancelledObjects?: () => string[] }, job: ActiveJob, r: {
  outcome: JobOutcome; time: number; end: number; error?: string; profile: string; interruption: PrintHistoryEntry['interruption'] | null;
}): Promise<void> {
  const result = r.outcome === 'done' ? 'success' : r.outcome === 'cancelled' ? 'cancelled' : 'failed';
  const cancelledObjects = job.file.origin === 'local' ? (deps.cancelledObjects?.() ?? []) : [];
  await deps.history.add({ origin: job.file.origin, path: job.file.path, name: job.file.name, start: job.startedAt, end: r.end,
    duration: r.time, result, ...(r.error ? { error: r.error } : {}), user: job.owner, printerProfile: r.profile,
    ...(cancelledObjects.length > 0 ? { cancelledObjects } : {}),
    ...(r.outcome === 'error' && r.interruption ? { interruption: r.interruption } : {}), ...deps.historyExtras?.() });
  if (job.file.origin === 'local') {
    await deps.files.recordPrint(job.file.path, { timestamp: r.end, success: r.outcome === 'done',
      ...(r.outcome === 'done' ? { printTime: r.time } : {}), printerProfile: r.profile });
  }
}

/**
 * The end's events: PrintDone, PrintCancelled (with where it stopped) or PrintFailed (with the interruption). For a
 * cancel, returns the PrintFailed to send once the statistics are written (events.md: PrintCancelled → ChartMarked →
 * MetadataStatisticsUpdated → PrintFailed; OctoPrint repeats the cancel's payload).
 */
export function emitEnd(events: EventBus, job: ActiveJob, outcome: JobOutcome, r: {
  base: JobEventPayload; time: number; error?: string; interruption: PrintHistoryEntry['interruption'] | null; position: () => Position;
}): (JobEventPayload & { time: number; reason: 'cancelled'; position: EventPosition }) | undefined {
  const { base, time } = r;
  if (outcome === 'done') {
    events.emit('ChartMarked', { type: 'done', label: 'Done' });
    events.emit('PrintDone', { ...base, time });
    return undefined;
  }
  if (outcome === 'cancelled') {
    // Only a position this job asked for is where it stopped (an SD print is never asked; the setting may change mid-print).
    const position = job.positionOnCancel ? { ...r.position() } : { ...NULL_POSITION };
    const cancelled = { ...base, time, reason: 'cancelled' as const, position };
    events.emit('PrintCancelled', cancelled);
    events.emit('ChartMarked', { type: 'cancel', label: 'Cancel' });
    return { ...cancelled, position: { ...position } };
  }
  events.emit('PrintFailed', { ...base, time, reason: 'error', error: r.error ?? 'unknown error', ...(r.interruption ? { interruption: r.interruption } : {}) });
  return undefined;
}
