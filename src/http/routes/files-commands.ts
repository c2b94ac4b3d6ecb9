// POST /api/files/{location}/{path}: the file commands select, unselect, slice, analyse, copy and move.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import { DomainError, ErrorCodes, conflict, invalid, notFound } from '../../core/errors.ts';
import { parseStoredPath, joinPath } from '../../files/safe-path.ts';
import { sendError } from '../error-mapper.ts';
import { abridged, resourceUrl, downloadUrl, AbridgedEntrySchema, SlicedEntrySchema } from '../../octoprint/file-entry.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';
import { externalBase } from '../urls.ts';
import { Param, commandUnion } from './command-body.ts';
import { requireLocation, type FilesRouteDeps } from './files.ts';
import { truthy } from '../../core/values.ts';

/** Slices a model file; the slicing module plugs it in. Returns the target file (possibly not written yet). */
export type SliceHook = (req: {
  origin: 'local';
  path: string;
  params: Record<string, unknown>;
  user?: string;
}) => Promise<{ name: string; path: string; display?: string }>;

const FileCommand = commandUnion<{ command?: string; print?: boolean | string; destination?: string; printerProfile?: string; [k: string]: unknown }>({
  select: { print: Param },
  unselect: {},
  slice: { slicer: Param, gcode: Param, profile: Param, printerProfile: Param, position: Param, select: Param, print: Param, destination: Param },
  analyse: {},
  copy: { destination: Param },
  move: { destination: Param },
}, {
  command: Type.Optional(Type.String()),
  print: Type.Optional(Type.Union([Type.Boolean(), Type.String()])),
  destination: Type.Optional(Type.String()),
  printerProfile: Type.Optional(Type.String()),
});
const EntryParams = Type.Object({ location: Type.String(), '*': Type.String() });

const COMMAND_PERMISSIONS: ReadonlyMap<string, string[]> = new Map(Object.entries({
  select: ['FILES_SELECT'],
  unselect: ['FILES_SELECT'],
  slice: ['SLICE'],
  analyse: ['FILES_UPLOAD'],
  copy: ['FILES_UPLOAD'],
  move: ['FILES_UPLOAD', 'FILES_DELETE'],
}));

/** OctoPrint answers these two commands' errors as plain text, not JSON. */
function plain(reply: FastifyReply, status: number, text: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(text);
}

export function registerFileCommandRoute(app: GantryApp, deps: FilesRouteDeps): void {
  const { files } = deps;

  app.post('/api/files/:location/*', { config: { access: 'anonymous' }, schema: { params: EntryParams, body: FileCommand, response: { 201: AbridgedEntrySchema, 202: SlicedEntrySchema, 204: NoContent } } },
    async (request, reply) => {
      const body = request.body;
      const command = body.command ?? '';
      // A Map, so `__proto__`, `constructor` and friends are unknown commands rather than Object.prototype's members.
      const perms = COMMAND_PERMISSIONS.get(command);
      if (!perms) throw invalid('command is invalid');
      const need = command === 'select' && truthy(body.print) ? [...perms, 'PRINT'] : perms;
      if (!need.every((p) => request.identity.has(p))) return sendError(reply, 403);
      const location = requireLocation(request.params.location, deps);
      const path = request.params['*'];
      const user = request.identity.name;

      switch (command) {
        case 'select': {
          if (location === 'local') await files.file(path);
          if (!deps.jobs) throw conflict('Printer is already printing, cannot select a new file');
          await deps.jobs.select(location, path, { print: truthy(body.print), user });
          return reply.code(204).send();
        }
        case 'unselect': {
          const jobs = deps.jobs;
          if (!jobs || !jobs.isReady()) return plain(reply, 409, 'Printer is already printing, cannot unselect current file');
          const sel = jobs.selected();
          if (!sel) return plain(reply, 409, 'Cannot unselect current file when there is no file selected');
          if (path !== 'current' && (sel.path !== path || sel.origin !== location)) {
            return plain(reply, 400, 'Only the currently selected file can be unselected');
          }
          jobs.unselect();
          return reply.code(204).send();
        }
        case 'analyse':
          if (location !== 'local') throw invalid('No analysis possible');
          await files.analyse(path);
          return reply.code(204).send();
        case 'slice':
          return slice(request, reply, deps, location, path, body as Record<string, unknown>);
        default: {
          const mode = command as 'copy' | 'move';
          if (location !== 'local') throw invalid(`Unsupported target for ${mode}`);
          if (typeof body.destination !== 'string' || body.destination === '') throw invalid('Mandatory parameters missing');
          const entry = await files.copyOrMove(path, body.destination, mode);
          const srcName = parseStoredPath(path).at(-1) ?? entry.name;
          const answer = abridged(externalBase(request), 'local', srcName, entry.path, entry.kind === 'file');
          return reply.code(201).header('Location', resourceUrl(externalBase(request), 'local', entry.path)).send(answer);
        }
      }
    });
}

async function slice(request: FastifyRequest, reply: FastifyReply, deps: FilesRouteDeps, location: 'local' | 'sdcard', path: string,
  params: Record<string, unknown>) {
  if (location !== 'local') throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA, 'Cannot slice file on the SD card');
  await deps.files.file(path);
  if (!deps.slice) throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA, 'Cannot slice file, no slicer available');
  const target = await deps.slice({ origin: 'local', path: joinPath(parseStoredPath(path)), params, user: request.identity.name });
  if (!target) throw notFound('Slicing target unknown');
  return reply.code(202).header('Location', resourceUrl(externalBase(request), 'local', target.path)).send({
    name: target.name, path: target.path, display: target.display ?? target.name, origin: 'local',
    refs: { resource: resourceUrl(externalBase(request), 'local', target.path), download: downloadUrl(externalBase(request), target.path) },
  });
}
