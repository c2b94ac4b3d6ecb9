// OctoPrint's job vocabulary: the `job` and `progress` objects of /api/job and of push `current`/`history`, and their
// response schemas. Written once here so the HTTP answer and the push message cannot drift apart.
import { Type } from '../config/typebox.ts';
import type { Static } from 'typebox';
import type { JobProgressSnapshot, JobSnapshot } from '../printer/job/job-types.ts';
import { AnyJson, Nullable } from './schema-kit.ts';

export const JobSchema = Type.Object({
  file: Type.Object({
    name: Nullable('string'), path: Nullable('string'), display: Type.Optional(Nullable('string')), origin: Nullable('string'),
    size: Nullable('number'), date: Nullable('number'),
  }),
  estimatedPrintTime: Nullable('number'),
  averagePrintTime: Type.Optional(Nullable('number')),
  lastPrintTime: Nullable('number'),
  /** `{tool0: {length, volume}}`, OctoPrint's start-up `{length: null, volume: null}`, or null. */
  filament: AnyJson,
  user: Nullable('string'),
});

export const ProgressSchema = Type.Object({
  completion: Nullable('number'),
  filepos: Nullable('number'),
  printTime: Nullable('number'),
  printTimeLeft: Nullable('number'),
  printTimeLeftOrigin: Type.Optional(Nullable('string')),
  printTimeOrigin: Type.Optional(Type.Null()),
});

export type JobWire = Static<typeof JobSchema>;
export type ProgressWire = Static<typeof ProgressSchema>;

/** Exactly OctoPrint's `job` at server start, before anything was selected (no `display`, length/volume filament). */
export function startupJob(): JobWire {
  return {
    file: { name: null, path: null, size: null, origin: null, date: null },
    estimatedPrintTime: null, lastPrintTime: null, filament: { length: null, volume: null }, user: null,
  };
}

/** OctoPrint's `progress` before the first update after start-up, with its `printTimeOrigin` typo. */
export function startupProgress(): ProgressWire {
  return { completion: null, filepos: null, printTime: null, printTimeLeft: null, printTimeOrigin: null };
}

export function jobWire(s: JobSnapshot): JobWire {
  const f = s.file;
  if (!f && s.progress === null) return startupJob();
  return {
    file: f
      ? { name: f.name, path: f.path, display: f.display, origin: f.origin, size: f.size, date: f.date }
      : { name: null, path: null, display: null, origin: null, size: null, date: null },
    estimatedPrintTime: s.estimatedPrintTime,
    averagePrintTime: s.averagePrintTime,
    lastPrintTime: s.lastPrintTime,
    filament: s.filament,
    user: s.user,
  };
}

export function progressWire(p: JobProgressSnapshot | null): ProgressWire {
  if (!p) return startupProgress();
  return { completion: p.completion, filepos: p.filepos, printTime: p.printTime, printTimeLeft: p.printTimeLeft,
    printTimeLeftOrigin: p.printTimeLeftOrigin };
}

/** GET /api/job. */
export const JobReplySchema = Type.Object({
  job: JobSchema,
  progress: ProgressSchema,
  state: Type.String(),
  error: Type.Optional(Type.String()),
  /** Gantry addition: why and where the last print stopped. */
  interruption: Type.Optional(AnyJson),
});
