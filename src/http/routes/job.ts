// /api/job: job commands (start, cancel, restart, pause with action) and the job information document.
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { JobRunner } from '../../printer/job/job-runner.ts';
import { JobReplySchema, jobWire, progressWire } from '../../octoprint/job.ts';
import type { PrinterApi } from '../../printer/printer-service.ts';
import { invalid } from '../../core/errors.ts';
import { commandUnion } from './command-body.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';

const JobCommand = commandUnion<{ command?: string; action?: string }>({ start: {}, cancel: {}, restart: {}, pause: { action: Type.Optional(Type.String()) } },
  { command: Type.Optional(Type.String()), action: Type.Optional(Type.String()) });

/** What the API asks of the job runner: /api/job and the print history (a test's stand-in is checked against it). */
export type JobApi = Pick<JobRunner, 'snapshot' | 'interruption' | 'stateText' | 'command' | 'printHistory'>;

export function registerJobRoutes(app: GantryApp, deps: { jobRunner: JobApi; printer: PrinterApi }): void {
  const { jobRunner, printer } = deps;

  app.get('/api/job', { config: { access: 'STATUS' }, schema: { response: { 200: JobReplySchema } } }, async () => {
    const snap = jobRunner.snapshot();
    const error = printer.state().error;
    // Gantry addition: why and where the last print stopped (see "When a print is interrupted" in the README).
    const interruption = jobRunner.interruption();
    return { job: jobWire(snap), progress: progressWire(snap.progress), state: jobRunner.stateText(), ...(error ? { error } : {}),
      ...(interruption ? { interruption } : {}) };
  });

  app.post('/api/job', { config: { access: 'PRINT' }, schema: { body: JobCommand, response: { 204: NoContent } } }, async (request, reply) => {
    const { command, action } = request.body;
    if (typeof command !== 'string') throw invalid('command is invalid');
    await jobRunner.command(command, { action, user: request.identity.name });
    return reply.code(204).send();
  });
}
