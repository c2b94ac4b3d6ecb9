// /api/plugin/spoolman: Spoolman's link and the active spool of each tool (GET), Spoolman's spools (GET …/spools), and
// choosing a tool's spool (POST {"command":"select","tool":0,"spool_id":3|null}); Gantry's own shape (src/spools/).
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { SpoolService } from '../../spools/spool-service.ts';
import { AnyJson } from '../../octoprint/schema-kit.ts';
import { invalid } from '../../core/errors.ts';

const Command = Type.Object({
  command: Type.Union([Type.Literal('select'), Type.Literal('sync')]),
  tool: Type.Optional(Type.Integer({ minimum: 0, maximum: 63 })),
  spool_id: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 999_999_999 }), Type.Null()])),
}, { additionalProperties: false });

export function registerSpoolmanRoutes(app: GantryApp, deps: { spools: SpoolService }): void {
  const { spools } = deps;
  app.get('/api/plugin/spoolman', { config: { access: 'STATUS' }, schema: { response: { 200: AnyJson } } }, async () => spools.status());
  app.get('/api/plugin/spoolman/spools', { config: { access: 'STATUS' }, schema: { response: { 200: AnyJson } } },
    async () => ({ spools: await spools.listSpools() }));
  app.post('/api/plugin/spoolman', { config: { access: 'CONTROL' }, schema: { body: Command, response: { 200: AnyJson } } }, async (request) => {
    const b = request.body;
    if (b.command === 'select') {
      if (b.spool_id === undefined) throw invalid('spool_id is missing (null clears the tool)');
      await spools.setActive(b.tool ?? 0, b.spool_id, request.identity.name ?? 'api');
    } else await spools.flush();
    return spools.status();
  });
}
