// /api/job: job commands (start, cancel, restart, pause with action) and the job information document.
import { Type } from 'typebox';
import type { GantryApp } from '../types.ts';
import type { JobRunner } from '../../printer/job-runner.ts';
import type { JobSnapshot } from '../../printer/job-types.ts';
import type { Printer } from '../../printer/types.ts';
import { invalid } from '../../core/errors.ts';

const JobBody = Type.Object({
  command: Type.Optional(Type.String()),
  action: Type.Optional(Type.String()),
}, { additionalProperties: true });

/** The `job` object in OctoPrint's shape (also used by the push channel's `current`). */
export function jobToWire(s: JobSnapshot): Record<string, unknown> {
  if (!s.file) {
    if (s.progress === null) {
      // Exactly OctoPrint's object at server start, before anything was selected.
      return { file: { name: null, path: null, size: null, origin: null, date: null }, estimatedPrintTime: null, lastPrintTime: null,
        filament: { length: null, volume: null }, user: null };
    }
    return { file: { name: null, path: null, display: null, origin: null, size: null, date: null }, estimatedPrintTime: null,
      averagePrintTime: null, lastPrintTime: null, filament: null, user: null };
  }
  const f = s.file;
  return {
    file: { name: f.name, path: f.path, display: f.display, origin: f.origin, size: f.size, date: f.date },
    estimatedPrintTime: s.estimatedPrintTime,
    averagePrintTime: s.averagePrintTime,
    lastPrintTime: s.lastPrintTime,
    filament: s.filament,
    user: s.user,
  };
}

/** The `progress` object; before the first update after start-up it carries OctoPrint's `printTimeOrigin` typo. */
export function progressToWire(s: JobSnapshot): Record<string, unknown> {
  if (s.progress === null) return { completion: null, filepos: null, printTime: null, printTimeLeft: null, printTimeOrigin: null };
  return { ...s.progress };
}

export function registerJobRoutes(app: GantryApp, deps: { jobRunner: JobRunner; printer: Printer }): void {
  const { jobRunner, printer } = deps;

  app.get('/api/job', { config: { access: 'STATUS' } }, async () => {
    const snap = jobRunner.snapshot();
    const error = printer.state().error;
    // Gantry addition: why and where the last print stopped (see "When a print is interrupted" in the README).
    const interruption = jobRunner.interruption();
    return { job: jobToWire(snap), progress: progressToWire(snap), state: jobRunner.stateText(), ...(error ? { error } : {}),
      ...(interruption ? { interruption } : {}) };
  });

  app.post('/api/job', { config: { access: 'PRINT' }, schema: { body: JobBody } }, async (request, reply) => {
    const { command, action } = request.body;
    if (typeof command !== 'string') throw invalid('command is invalid');
    await jobRunner.command(command, { action, user: request.identity.name });
    return reply.code(204).send();
  });
}
