// server.history.*: Gantry's print history in Moonraker's job shape (docs/reference/moonraker.md §3.1).
import type { HistoryRecord } from './moonraker-deps.ts';
import { RpcError } from './rpc-errors.ts';

export type HistoryStatus = 'in_progress' | 'completed' | 'cancelled' | 'error';

/** A job's id: its start in whole seconds, as hex (stable across restarts; two prints never start in one second). */
export const jobId = (start: number): string => Math.floor(start).toString(16).toUpperCase().padStart(8, '0');

const statusOf = (r: HistoryRecord['result']): HistoryStatus => (r === 'success' ? 'completed' : r === 'cancelled' ? 'cancelled' : 'error');

/** What a job's entry adds from elsewhere: the file's metadata (if it still exists) and the filament counted while printing. */
export interface JobExtras { exists: boolean; metadata: Record<string, unknown>; filamentUsed: number }
export type Enrich = (r: HistoryRecord) => Promise<JobExtras>;

export function historyJob(r: HistoryRecord, extras: JobExtras = { exists: true, metadata: {}, filamentUsed: 0 }): Record<string, unknown> {
  return {
    job_id: jobId(r.start), user: r.user ?? null, filename: r.path, exists: extras.exists, status: statusOf(r.result), start_time: r.start,
    end_time: r.end, print_duration: r.duration, total_duration: Math.max(0, r.end - r.start), filament_used: extras.filamentUsed,
    metadata: extras.metadata, auxiliary_data: [],
  };
}

const num = (v: unknown, fallback: number): number => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : fallback;
};

export async function historyList(records: HistoryRecord[], params: Record<string, unknown>, enrich: Enrich): Promise<Record<string, unknown>> {
  const start = Math.max(0, Math.floor(num(params.start, 0)));
  const limit = Math.max(0, Math.min(1000, Math.floor(num(params.limit, 50))));
  const before = num(params.before, Infinity);
  const since = num(params.since, -Infinity);
  const asc = params.order === 'asc';
  const kept = records.filter((r) => r.start > since && r.start < before).sort((a, b) => (asc ? a.start - b.start : b.start - a.start));
  const jobs = [];
  for (const r of kept.slice(start, start + limit)) jobs.push(historyJob(r, await enrich(r)));
  return { count: kept.length, jobs };
}

export async function historyJobById(records: HistoryRecord[], uid: unknown, enrich: Enrich): Promise<Record<string, unknown>> {
  const r = records.find((x) => jobId(x.start) === uid);
  if (!r) throw new RpcError(404, `Invalid job uid: ${String(uid)}`);
  return { job: historyJob(r, await enrich(r)) };
}

export function historyTotals(records: HistoryRecord[], filament: (r: HistoryRecord) => number): Record<string, unknown> {
  let totalTime = 0;
  let printTime = 0;
  let longestJob = 0;
  let longestPrint = 0;
  let filamentTotal = 0;
  for (const r of records) {
    filamentTotal += filament(r);
    const total = Math.max(0, r.end - r.start);
    totalTime += total;
    printTime += r.duration;
    longestJob = Math.max(longestJob, total);
    longestPrint = Math.max(longestPrint, r.duration);
  }
  return {
    job_totals: { total_jobs: records.length, total_time: totalTime, total_print_time: printTime, total_filament_used: filamentTotal, longest_job: longestJob, longest_print: longestPrint },
    auxiliary_totals: [],
  };
}
