// /api/plugin/cancelobject: Cancelobject's API (docs/reference/plugins.md §2.3) over src/objects/: objlist → 200
// {"list": […]}, cancel {cancelled: id} → 204, resetpos and skip → 204, GET → 204 (re-pushes); and Gantry's
// `/api/plugin/cancelobject/outlines` for its UI (the list with each object's outline polygon).
import type { GantryApp } from '../types.ts';
import type { CancelObjectService } from '../../objects/cancel-object-service.ts';
import { forbidden, invalid } from '../../core/errors.ts';
import { AnyJson, NoContent } from '../../octoprint/schema-kit.ts';
import { CommandBody, commandOf } from './command-body.ts';

const COMMANDS = ['objlist', 'cancel', 'resetpos', 'skip'] as const;

export function registerCancelObjectRoutes(app: GantryApp, deps: { cancelObjects: CancelObjectService }): void {
  const { cancelObjects } = deps;
  app.get('/api/plugin/cancelobject', { config: { access: 'STATUS' }, schema: { response: { 204: NoContent } } }, async (_request, reply) => {
    await cancelObjects.ready();
    cancelObjects.refresh();
    return reply.code(204).send();
  });
  app.get('/api/plugin/cancelobject/outlines', { config: { access: 'STATUS' }, schema: { response: { 200: AnyJson } } }, async () => {
    await cancelObjects.ready();
    return { objects: cancelObjects.outlines(), active: cancelObjects.activeId };
  });
  app.post('/api/plugin/cancelobject', { config: { access: 'STATUS' }, schema: { body: CommandBody, response: { 200: AnyJson, 204: NoContent } } }, async (request, reply) => {
    const { command, body } = commandOf(request.body, COMMANDS, { cancel: ['cancelled'] });
    await cancelObjects.ready();
    if (command === 'objlist') return { list: cancelObjects.objlist() };
    if (!request.identity.has('CONTROL')) throw forbidden('Insufficient rights');
    if (command === 'cancel') {
      // The plugin applies int(): an int or a numeric string.
      const raw = body.cancelled;
      const id = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isInteger(id)) throw invalid('cancelled must be an object id');
      await cancelObjects.cancel(id);
    } else if (command === 'resetpos') cancelObjects.resetpos();
    return reply.code(204).send();
  });
}
