// /api/system/commands (list, run) and the deprecated POST /api/system wrapper, in OctoPrint's wire shape.
import type { FastifyRequest } from 'fastify';
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import { DIVIDER, type CommandSource, type SystemCommand, type SystemCommands } from '../../system/system-commands.ts';
import { sendError } from '../error-mapper.ts';
import { externalBase } from '../urls.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';

/** Some apps send `Content-Type: application/json` with an empty body on commands that take none; that is not malformed. */
async function ignoreEmptyJson(request: FastifyRequest): Promise<void> {
  if (request.headers['content-length'] === '0') delete request.headers['content-type'];
}

const SourceParams = Type.Object({ source: Type.String() });
const ActionParams = Type.Object({ source: Type.String(), action: Type.String() });
const CommandEntry = Type.Object({
  action: Type.String(), name: Type.String(), confirm: Type.Optional(Type.String()), source: Type.String(), resource: Type.String(),
});
const CommandList = Type.Array(CommandEntry);
const AllCommands = Type.Object({ core: CommandList, custom: CommandList });

export function registerSystemRoutes(app: GantryApp, deps: { systemCommands: SystemCommands }): void {
  const commands = deps.systemCommands;

  const toWire = (request: FastifyRequest, c: SystemCommand) => ({
    action: c.action,
    name: c.action === DIVIDER ? (c.name === DIVIDER ? '' : c.name) : c.name,
    ...(c.confirm ? { confirm: c.confirm } : {}),
    source: c.source,
    resource: `${externalBase(request)}/api/system/commands/${c.source}/${encodeURIComponent(c.action)}`,
  });
  const listOf = (request: FastifyRequest, source: CommandSource) => commands.list(source).map((c) => toWire(request, c));

  app.get('/api/system/commands', { config: { access: 'SYSTEM' }, schema: { response: { 200: AllCommands } } }, async (request) => ({
    core: listOf(request, 'core'),
    custom: listOf(request, 'custom'),
  }));

  app.get('/api/system/commands/:source', { config: { access: 'SYSTEM' }, schema: { params: SourceParams, response: { 200: CommandList } } }, async (request, reply) => {
    const { source } = request.params;
    if (!commands.isSource(source)) return sendError(reply, 404);
    return listOf(request, source);
  });

  app.post('/api/system/commands/:source/:action', {
    config: { access: 'SYSTEM' },
    onRequest: ignoreEmptyJson,
    schema: { params: ActionParams, body: Type.Unknown(), response: { 204: NoContent } },
  }, async (request, reply) => {
    await commands.execute(request.params.source, request.params.action);
    return reply.code(204).send();
  });

  // Deprecated since OctoPrint 1.3; old scripts still post `action` as JSON, form data or a query parameter. Form bodies
  // are parsed only in this scope so the rest of the API keeps its JSON-only contract.
  void app.register(async (scope) => {
    if (!scope.hasContentTypeParser('application/x-www-form-urlencoded')) {
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
    }
    scope.post('/api/system', {
      config: { access: 'SYSTEM' },
      onRequest: ignoreEmptyJson,
      schema: { body: Type.Unknown(), querystring: Type.Object({ action: Type.Optional(Type.String()) }, { additionalProperties: true }),
        response: { 204: NoContent } },
    }, async (request, reply) => {
      request.log.warn('POST /api/system is deprecated, use POST /api/system/commands/custom/{action}');
      const body = request.body as Record<string, unknown> | undefined;
      const action = typeof body?.action === 'string' ? body.action : (request.query as { action?: string }).action;
      if (!action) return sendError(reply, 400, 'No action given');
      await commands.execute('custom', action);
      return reply.code(204).send();
    });
  });
}
