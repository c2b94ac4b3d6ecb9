// The farm's print queue over HTTP (src/queue/): GET/POST/PATCH /api/farm/queue, DELETE /api/farm/queue/:id and
// POST /api/farm/printers/:name/bedclear. Reading needs STATUS; everything that changes it or may start a print, PRINT.
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { PrintQueue, QueueConstraint } from '../../queue/print-queue.ts';
import { AnyJson, NoContent } from '../../octoprint/schema-kit.ts';
import { invalid } from '../../core/errors.ts';

// One object rather than a union of three: the validator's removal of unknown keys would strip `printer` while trying
// the `any` branch.
const Constraint = Type.Object({
  kind: Type.Union([Type.Literal('any'), Type.Literal('printer'), Type.Literal('profile')]),
  printer: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
}, { additionalProperties: false });

const AddBody = Type.Object({
  path: Type.String({ minLength: 1, maxLength: 4096 }),
  copies: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  constraint: Type.Optional(Constraint),
}, { additionalProperties: false });

const CommandBody = Type.Object({
  command: Type.Union(['pause', 'resume', 'move', 'remove', 'release', 'printer'].map((c) => Type.Literal(c))),
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  position: Type.Optional(Type.Integer({ minimum: 0 })),
  printer: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  autoClear: Type.Optional(Type.Boolean()),
  filamentType: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
}, { additionalProperties: false });

const Snapshot = Type.Object({ paused: Type.Boolean(), jobs: Type.Array(AnyJson), printers: Type.Array(AnyJson) });
const Name = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });
const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export function registerFarmQueueRoutes(app: GantryApp, deps: { queue: PrintQueue }): void {
  const { queue } = deps;
  app.get('/api/farm/queue', { config: { access: 'STATUS' }, schema: { response: { 200: Snapshot } } }, async () => queue.snapshot());

  app.post('/api/farm/queue', { config: { access: 'PRINT' }, schema: { body: AddBody, response: { 201: Type.Object({ job: AnyJson }) } } }, async (request, reply) => {
    const body = request.body as { path: string; copies?: number; constraint?: { kind: QueueConstraint['kind']; printer?: string } };
    const c = body.constraint;
    if (c?.kind === 'printer' && c.printer === undefined) throw invalid('A printer constraint names the printer');
    if (c && c.kind !== 'printer' && c.printer !== undefined) throw invalid('Only a printer constraint names a printer');
    const constraint: QueueConstraint | undefined = c === undefined ? undefined : c.kind === 'printer' ? { kind: 'printer', printer: c.printer as string } : { kind: c.kind };
    const job = await queue.add({ path: body.path, copies: body.copies, constraint }, request.identity.name ?? null);
    return reply.code(201).send({ job });
  });

  app.patch('/api/farm/queue', { config: { access: 'PRINT' }, schema: { body: CommandBody, response: { 200: Snapshot } } }, async (request) => {
    const body = request.body as { command: string; id?: string; position?: number; printer?: string; autoClear?: boolean; filamentType?: string | null };
    const user = request.identity.name ?? null;
    const id = (): string => {
      if (body.id === undefined) throw invalid(`${body.command} needs the job's id`);
      return body.id;
    };
    switch (body.command) {
      case 'pause': await queue.setPaused(true, user); break;
      case 'resume': await queue.setPaused(false, user); break;
      case 'remove': await queue.remove(id(), user); break;
      case 'release': await queue.release(id(), user); break;
      case 'move':
        if (body.position === undefined) throw invalid('move needs a position');
        await queue.move(id(), body.position);
        break;
      default:
        if (body.printer === undefined) throw invalid('printer needs the printer\'s name');
        await queue.configurePrinter(body.printer, { autoClear: body.autoClear, filamentType: body.filamentType });
    }
    return queue.snapshot();
  });

  app.delete('/api/farm/queue/:id', { config: { access: 'PRINT' }, schema: { params: Id, response: { 204: NoContent } } }, async (request, reply) => {
    await queue.remove((request.params as { id: string }).id, request.identity.name ?? null);
    return reply.code(204).send();
  });

  app.post('/api/farm/printers/:name/bedclear', { config: { access: 'PRINT' }, schema: { params: Name, response: { 204: NoContent } } }, async (request, reply) => {
    await queue.bedClear((request.params as { name: string }).name, request.identity.name ?? null);
    return reply.code(204).send();
  });
}
