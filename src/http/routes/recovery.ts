// /api/plugin/recovery: the offer to resume an interrupted print, and resume/discard (Gantry addition, src/recovery/).
import { Type } from '../../config/typebox.ts';
import type { Static } from 'typebox';
import type { GantryApp } from '../types.ts';
import type { PrintJournal } from '../../recovery/print-journal.ts';
import { invalid } from '../../core/errors.ts';
import { NoContent, OpenObject } from '../../octoprint/schema-kit.ts';

const RecoveryBody = Type.Object({
  command: Type.Union([Type.Literal('resume'), Type.Literal('discard')]),
  line: Type.Optional(Type.Integer({ minimum: 1 })),
  layer: Type.Optional(Type.Integer({ minimum: 0 })),
}, { additionalProperties: false });

/** `{available: false}`, or the interrupted print's file, position and the choices to resume it (src/recovery/). */
const Offer = OpenObject({ available: Type.Boolean() });
const Resumed = Type.Object({ line: Type.Number(), filepos: Type.Number() });

export function registerRecoveryRoutes(app: GantryApp, deps: { recovery: PrintJournal }): void {
  const { recovery } = deps;

  app.get('/api/plugin/recovery', { config: { access: 'STATUS' }, schema: { response: { 200: Offer } } }, async () => recovery.offer() as Static<typeof Offer>);

  app.post('/api/plugin/recovery', { config: { access: 'PRINT' }, schema: { body: RecoveryBody, response: { 200: Resumed, 204: NoContent } } }, async (request, reply) => {
    const { command, line, layer } = request.body;
    if (command === 'discard') {
      await recovery.discard();
      return reply.code(204).send();
    }
    if (line !== undefined && layer !== undefined) throw invalid('Give line or layer, not both');
    return recovery.resume({ line, layer }, request.identity.name ?? null);
  });
}
