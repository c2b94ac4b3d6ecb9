// /api/plugin/bedmesh (Gantry's: the latest mesh, the history, probe, delete) and Bed Level Visualizer's own
// /api/plugin/bedlevelvisualizer (204, or {"stopped": true} with ?stopProcessing=true, as the plugin answers).
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { BedMeshService } from '../../bed-mesh/bed-mesh-service.ts';
import { NoContent, OpenObject } from '../../octoprint/schema-kit.ts';
import { invalid, notFound } from '../../core/errors.ts';

// One object, not a union of two: Ajv's removeAdditional would strip `id` while it tries the first branch.
const Command = Type.Object({
  command: Type.Union([Type.Literal('probe'), Type.Literal('delete')]),
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
}, { additionalProperties: false });
const Meshes = Type.Object({ probing: Type.Boolean(), latest: Type.Union([OpenObject({}), Type.Null()]), history: Type.Array(OpenObject({})) });
const VisualizerQuery = Type.Object({ stopProcessing: Type.Optional(Type.String({ maxLength: 16 })) }, { additionalProperties: true });

export function registerBedMeshRoutes(app: GantryApp, deps: { bedMesh: BedMeshService }): void {
  const { bedMesh } = deps;
  app.get('/api/plugin/bedmesh', { config: { access: 'STATUS' }, schema: { response: { 200: Meshes } } },
    async () => ({ probing: bedMesh.probing(), latest: bedMesh.latest() as never, history: bedMesh.history() as never }));
  app.post('/api/plugin/bedmesh', { config: { access: 'CONTROL' }, schema: { body: Command, response: { 204: NoContent } } }, async (request, reply) => {
    const body = request.body;
    if (body.command === 'probe') bedMesh.probe();
    else if (body.id === undefined) throw invalid('delete needs the id of a mesh');
    else if (!(await bedMesh.remove(body.id))) throw notFound(`No bed mesh ${body.id}`);
    return reply.code(204).send();
  });

  app.get('/api/plugin/bedlevelvisualizer', { config: { access: 'STATUS' }, schema: { querystring: VisualizerQuery, response: { 200: Type.Object({ stopped: Type.Boolean() }), 204: NoContent } } }, async (request, reply) => {
    if (request.query.stopProcessing === 'true') return { stopped: true };
    return reply.code(204).send();
  });
  // The plugin declares stopProcessing as a command without a handler: it answers 204 and does nothing.
  app.post('/api/plugin/bedlevelvisualizer', { config: { access: 'CONTROL' }, schema: { body: Type.Object({ command: Type.Literal('stopProcessing') }, { additionalProperties: true }), response: { 204: NoContent } } },
    async (_request, reply) => reply.code(204).send());
}
