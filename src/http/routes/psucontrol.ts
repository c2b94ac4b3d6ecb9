// /api/plugin/psucontrol: PSU Control's API (docs/reference/plugins.md §1.1) over src/power/: GET and getPSUState
// answer {"isPSUOn": …} (that key first and only: OctoFarm reads the first key), turnPSUOn/turnPSUOff/togglePSU 204
// once the switch is done; an off while printing or heating needs `force` (409 otherwise).
import { Type } from '../../config/typebox.ts';
import type { FastifyReply } from 'fastify';
import type { GantryApp } from '../types.ts';
import type { PowerService } from '../../power/power-service.ts';
import { DeviceError } from '../../power/providers/provider.ts';
import { forbidden } from '../../core/errors.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';
import { CommandBody, commandOf } from './command-body.ts';
import { sendError } from '../error-mapper.ts';

const State = Type.Object({ isPSUOn: Type.Boolean() });
const COMMANDS = ['turnPSUOn', 'turnPSUOff', 'togglePSU', 'getPSUState'] as const;
export const PSU_CONTROL_PERMISSION = 'PLUGIN_PSUCONTROL_CONTROL';

const truthy = (v: unknown) => v === true || v === 'true' || v === '1' || v === 1 || v === '';

export function registerPsuControlRoutes(app: GantryApp, deps: { power: PowerService }): void {
  const { power } = deps;
  // A device that does not answer is a bad gateway, told as it is (not a 500 of Gantry's own).
  const device = async <T>(fn: () => Promise<T>, reply: FastifyReply): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DeviceError) { sendError(reply, 502, err.message); return undefined; }
      throw err;
    }
  };

  app.get('/api/plugin/psucontrol', { config: { access: 'STATUS' }, schema: { response: { 200: State } } }, async (_request, reply) => {
    const on = await device(() => power.state(), reply);
    return on === undefined ? reply : { isPSUOn: on };
  });

  app.post<{ Querystring: { force?: string } }>('/api/plugin/psucontrol', {
    config: { access: 'STATUS' },
    schema: { body: CommandBody, querystring: Type.Object({ force: Type.Optional(Type.String()) }, { additionalProperties: true }), response: { 200: State, 204: NoContent } },
  }, async (request, reply) => {
    const { command, body } = commandOf(request.body, COMMANDS);
    if (command === 'getPSUState') {
      const on = await device(() => power.state(), reply);
      return on === undefined ? reply : { isPSUOn: on };
    }
    if (!request.identity.has(PSU_CONTROL_PERMISSION)) throw forbidden('Insufficient rights');
    const force = truthy(body.force) || (request.query.force !== undefined && truthy(request.query.force));
    const done = await device(async () => {
      if (command === 'turnPSUOn') await power.turnOn();
      else if (command === 'turnPSUOff') await power.turnOff({ force, reason: 'api' });
      else await power.toggle(force);
      return true;
    }, reply);
    return done === undefined ? reply : reply.code(204).send();
  });
}
