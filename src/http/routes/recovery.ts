// /api/plugin/recovery: the offer to resume an interrupted print, and resume/discard (Gantry addition, src/recovery/).
import { Type } from 'typebox';
import type { GantryApp } from '../types.ts';
import type { PrintJournal } from '../../recovery/print-journal.ts';
import { invalid } from '../../core/errors.ts';

const RecoveryBody = Type.Object({
  command: Type.Union([Type.Literal('resume'), Type.Literal('discard')]),
  line: Type.Optional(Type.Integer({ minimum: 1 })),
  layer: Type.Optional(Type.Integer({ minimum: 0 })),
}, { additionalProperties: false });

export function registerRecoveryRoutes(app: GantryApp, deps: { recovery: PrintJournal }): void {
  const { recovery } = deps;

  app.get('/api/plugin/recovery', { config: { access: 'STATUS' } }, async () => recovery.offer());

  app.post('/api/plugin/recovery', { config: { access: 'PRINT' }, schema: { body: RecoveryBody } }, async (request, reply) => {
    const { command, line, layer } = request.body;
    if (command === 'discard') {
      await recovery.discard();
      return reply.code(204).send();
    }
    if (line !== undefined && layer !== undefined) throw invalid('Give line or layer, not both');
    return recovery.resume({ line, layer }, request.identity.name ?? null);
  });
}
