// /api/files: listings (ETag/304), single entries, delete and the /api/files/test helper. Upload lives in
// files-upload.ts, file commands in files-commands.ts, downloads in downloads.ts.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { GantryApp } from '../types.ts';
import type { FileService } from '../../files/file-service.ts';
import type { SdCardFiles } from '../../files/sd-card.ts';
import type { ConfigStore } from '../../config/config-store.ts';
import type { JobControl } from '../../printer/job-types.ts';
import { notFound, invalid } from '../../core/errors.ts';
import { sendError } from '../error-mapper.ts';
import { toWire, type WireEntry, FileEntrySchema, FileListSchema } from '../../octoprint/file-entry.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';
import { externalBase } from '../urls.ts';
import { registerFileCommandRoute, type SliceHook } from './files-commands.ts';
import { registerUploadRoute } from './files-upload.ts';
import { truthy } from '../../core/values.ts';

export interface FilesRouteDeps {
  files: FileService;
  config: ConfigStore;
  /** The job runner (selection and printing after upload / the select command). */
  jobs?: JobControl;
  /** The printer's SD card as a location. */
  sdFiles?: SdCardFiles;
  /** Slicing of model files; without it `slice` answers "no slicer available". */
  slice?: SliceHook;
}


const ListQuery = Type.Object({
  recursive: Type.Optional(Type.String()),
  force: Type.Optional(Type.String()),
  filter: Type.Optional(Type.String({ maxLength: 64 })),
  _refresh: Type.Optional(Type.String()),
}, { additionalProperties: true });
const LocationParams = Type.Object({ location: Type.String() });
const EntryParams = Type.Object({ location: Type.String(), '*': Type.String() });
const TestBody = Type.Object({
  command: Type.Optional(Type.String()),
  storage: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  filename: Type.Optional(Type.String()),
}, { additionalProperties: true });
/** Listings are serialised by sendConditional (once, for the ETag and the body); the schema says what that writes. */
const ListReply = { 200: FileListSchema, 304: NoContent };
const TestReply = Type.Object({ sanitized: Type.Optional(Type.String()), exists: Type.Optional(Type.Boolean()), suggestion: Type.Optional(Type.String()) });

export function requireLocation(location: string, deps: FilesRouteDeps): 'local' | 'sdcard' {
  if (location === 'local') return 'local';
  if (location === 'sdcard' && deps.config.current.feature.sdSupport) return 'sdcard';
  throw notFound('Unknown location');
}

/**
 * Sends a listing with ETag/Last-Modified, or 304 when the client's copy is current (unless force/_refresh). Like
 * OctoPrint's, the ETag covers the entries only: free disk space changing under other writers is not a new listing.
 */
function sendConditional(request: FastifyRequest, reply: FastifyReply, body: { files: unknown; [k: string]: unknown }, lastModifiedMs: number) {
  const q = request.query as { force?: string; _refresh?: string };
  // The entries are serialised once, for both the tag and the body (the same bytes JSON.stringify(body) gives).
  const filesJson = JSON.stringify(body.files);
  let json = `{"files":${filesJson}`;
  for (const [k, v] of Object.entries(body)) if (k !== 'files' && v !== undefined) json += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
  json += '}';
  const etag = `"${createHash('sha1').update(filesJson).digest('hex')}"`;
  const lastModified = new Date(Math.floor(lastModifiedMs / 1000) * 1000);
  const bypass = Boolean(q.force) || Boolean(q._refresh);
  if (!bypass) {
    const inm = request.headers['if-none-match'];
    const ims = request.headers['if-modified-since'];
    const etagMatch = inm !== undefined && inm.split(',').map((s) => s.trim().replace(/^W\//, '')).includes(etag);
    const imsMatch = inm === undefined && ims !== undefined && Date.parse(ims) >= lastModified.getTime();
    if (etagMatch || imsMatch) {
      reply.header('ETag', etag).header('Last-Modified', lastModified.toUTCString());
      return reply.code(304).removeHeader('Content-Type').send();
    }
  }
  return reply.header('ETag', etag).header('Last-Modified', lastModified.toUTCString()).type('application/json').send(json);
}

export function registerFilesRoutes(app: GantryApp, deps: FilesRouteDeps): void {
  const { files } = deps;

  const localListing = async (request: FastifyRequest, recursive: boolean, filter?: string): Promise<WireEntry[]> => {
    const base = externalBase(request);
    return (await files.list({ recursive, filter: filter || undefined })).map((e) => toWire(base, e));
  };

  const sdListing = async (request: FastifyRequest, force: boolean): Promise<WireEntry[]> => {
    if (!deps.sdFiles || !deps.config.current.feature.sdSupport) return [];
    const base = externalBase(request);
    return (await deps.sdFiles.list(force)).map((e) => toWire(base, e));
  };

  app.get('/api/files', { config: { access: 'FILES_LIST' }, schema: { querystring: ListQuery, response: ListReply } }, async (request, reply) => {
    const q = request.query;
    const recursive = truthy(q.recursive);
    const local = await localListing(request, recursive, q.filter);
    const sd = await sdListing(request, truthy(q.force));
    const usage = await files.diskUsage();
    return sendConditional(request, reply, { files: [...local, ...sd], free: usage.free, total: usage.total }, files.lastModified);
  });

  app.get('/api/files/:location', { config: { access: 'FILES_LIST' }, schema: { params: LocationParams, querystring: ListQuery, response: ListReply } },
    async (request, reply) => {
      const location = requireLocation(request.params.location, deps);
      const q = request.query;
      if (location === 'sdcard') return sendConditional(request, reply, { files: await sdListing(request, truthy(q.force)) }, files.lastModified);
      const local = await localListing(request, truthy(q.recursive), q.filter);
      const usage = await files.diskUsage();
      return sendConditional(request, reply, { files: local, free: usage.free, total: usage.total }, files.lastModified);
    });

  app.get('/api/files/:location/*', { config: { access: 'FILES_LIST' },
    schema: { params: EntryParams, querystring: ListQuery, response: { 200: FileEntrySchema } } },
    async (request, reply) => {
      const location = requireLocation(request.params.location, deps);
      const path = request.params['*'];
      if (location === 'sdcard') {
        if (!deps.sdFiles) throw notFound('File not found');
        return reply.send(toWire(externalBase(request), await deps.sdFiles.entry(path)));
      }
      const q = request.query;
      const entry = await files.entry(path, { recursive: truthy(q.recursive), filter: q.filter || undefined });
      return reply.send(toWire(externalBase(request), entry));
    });

  app.delete('/api/files/:location/*', { config: { access: 'FILES_DELETE' }, schema: { params: EntryParams, response: { 204: NoContent } } }, async (request, reply) => {
    const { location } = request.params;
    if (location !== 'local' && location !== 'sdcard') return sendError(reply, 404);
    requireLocation(location, deps);
    const path = request.params['*'];
    if (location === 'sdcard') {
      if (!deps.sdFiles) throw notFound('File not found');
      await deps.sdFiles.remove(path);
    } else {
      await files.remove(path);
    }
    return reply.code(204).send();
  });

  app.post('/api/files/test', { config: { access: 'FILES_LIST' }, schema: { body: TestBody, response: { 200: TestReply } } }, async (request) => {
    const b = request.body;
    if (b.command !== 'sanitize' && b.command !== 'exists') throw invalid('command is invalid');
    if (typeof b.storage !== 'string' || typeof b.path !== 'string' || typeof b.filename !== 'string') throw invalid('Mandatory parameters missing');
    if (b.storage !== 'local') throw notFound('Unknown location');
    const sanitized = files.sanitize(b.path, b.filename);
    if (b.command === 'sanitize') return { sanitized: `${files.uploadsRoot}/${sanitized}` };
    if (!(await files.exists(sanitized))) return { exists: false };
    const dot = sanitized.lastIndexOf('.');
    const slash = sanitized.lastIndexOf('/');
    const stem = dot > slash + 1 ? sanitized.slice(0, dot) : sanitized;
    const ext = dot > slash + 1 ? sanitized.slice(dot) : '';
    for (let n = 1; n < 10_000; n++) {
      const candidate = `${stem}_${n}${ext}`;
      if (!(await files.exists(candidate))) return { exists: true, suggestion: candidate.slice(slash + 1) };
    }
    return { exists: true };
  });

  registerFileCommandRoute(app, deps);
  registerUploadRoute(app, deps);
}
