// DisplayLayerProgress's routes (docs/reference/plugins.md §3.3–3.4): `/plugin/DisplayLayerProgress/values` (the
// blueprint, note /plugin/ not /api/plugin/), the SimpleApi GET that refreshes (204); and Gantry's preheat from a file
// (`POST /api/plugin/preheat {"command":"preheat","path"?}` → 200 with the targets set).
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { LayerProgressService } from '../../layer-progress/layer-progress-service.ts';
import { AnyJson, NoContent } from '../../octoprint/schema-kit.ts';
import { CommandBody, commandOf } from './command-body.ts';
import { invalid } from '../../core/errors.ts';

const Targets = Type.Record(Type.String(), Type.Number());

export function registerLayerProgressRoutes(app: GantryApp, deps: { layerProgress: LayerProgressService }): void {
  const { layerProgress } = deps;
  app.get('/plugin/DisplayLayerProgress/values', { config: { access: 'STATUS' }, schema: { response: { 200: AnyJson } } }, async () => layerProgress.values());
  app.get('/api/plugin/DisplayLayerProgress', { config: { access: 'STATUS' }, schema: { response: { 204: NoContent } } }, async (_request, reply) => {
    layerProgress.refresh();
    return reply.code(204).send();
  });
  app.post('/api/plugin/preheat', { config: { access: 'CONTROL' }, schema: { body: CommandBody, response: { 200: Type.Object({ targets: Targets }) } } }, async (request) => {
    const { body } = commandOf(request.body, ['preheat'] as const);
    if (body.path !== undefined && typeof body.path !== 'string') throw invalid('path must be a file path');
    return { targets: await layerProgress.preheat(body.path as string | undefined) };
  });
}
