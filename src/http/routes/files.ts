// /api/files: listings (ETag/304), single entries, delete and the /api/files/test helper. Upload lives in
// files-upload.ts, file commands in files-commands.ts, downloads in downloads.ts.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { FileService } from '../../files/file-service.ts';
import type { SdCardFiles } from '../../files/sd-card.ts';
import type { ConfigStore } from '../../config/config-store.ts';
import type { JobControl } from '../../printer/job/job-types.ts';
import { notFound, invalid } from '../../core/errors.ts';
import { sendError } from '../error-mapper.ts';
import type { StoredEntry, StoredFile } from '../../files/types.ts';
import { SCAN_REUSE_MS, shortLived } from '../short-lived.ts';
import { toWire, FileEntrySchema, FileListSchema } from '../../octoprint/file-entry.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';
import { externalBase } from '../urls.ts';
import { registerFileCommandRoute, type SliceHook } from './files-commands.ts';
import { registerUploadRoute } from './files-upload.ts';
import { truthy } from '../../core/values.ts';
import { ListingJson } from '../listing-json.ts';
import { etagMatches } from '../conditional.ts';

export interface FilesRouteDeps {
  files: FileService;
  config: ConfigStore;
  /** The job runner (selection and printing after upload / the select command). */
  jobs?: JobControl;
  /** The printer's SD card as a location. */
  sdFiles?: SdCardFiles;
  /** Slicing of model files; without it `slice` answers "no slicer available". */
  slice?: SliceHook;
  /** Power control: an upload asking to print switches on and connects first (turnOnWhenApiUploadPrint). */
  power?: { beforeUploadPrint(): Promise<void> };
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
 * A listing's entries as JSON in UTF-8, and its ETag (which covers the entries only). Kept as bytes: as a string it was
 * two bytes a character whenever one string in it was (V8 stores a string one or two bytes a character, and every
 * analysis holds such a string from the worker), and the whole answer built on it was kept beside it. A recursive
 * listing of 10,000 files held 2 × 23.5 MB of heap that way; now 12 MB.
 */
interface Rendered { files: Buffer; etag: string }

function rendered(files: Buffer): Rendered {
  return { files, etag: `"${createHash('sha1').update(files).digest('hex')}"` };
}

const FILES_OPEN = Buffer.from('{"files":');

/** Last-Modified of the last listing time sent (it changes only with the files). */
let lastModifiedCache = { seconds: NaN, text: '' };
function httpDate(seconds: number): string {
  if (lastModifiedCache.seconds !== seconds) lastModifiedCache = { seconds, text: new Date(seconds * 1000).toUTCString() };
  return lastModifiedCache.text;
}

/** `force`/`_refresh` in any form (even `force=false`, as OctoPrint's truthiness of a present value has it). */
const bypassOf = (q: { force?: string; _refresh?: string }): boolean => Boolean(q.force) || Boolean(q._refresh);

/**
 * Sends a listing with ETag/Last-Modified, or 304 when the client's copy is current (unless force/_refresh). Like
 * OctoPrint's, the ETag covers the entries only: free disk space changing under other writers is not a new listing.
 */
function sendConditional(request: FastifyRequest, reply: FastifyReply, listing: Rendered, rest: Record<string, unknown>, lastModifiedMs: number) {
  const q = request.query as { force?: string; _refresh?: string };
  // The same bytes JSON.stringify({ files, ...rest }) gives.
  let restJson = '';
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) restJson += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
  const { etag } = listing;
  const seconds = Math.floor(lastModifiedMs / 1000);
  if (!bypassOf(q)) {
    const inm = request.headers['if-none-match'];
    const ims = request.headers['if-modified-since'];
    const etagMatch = etagMatches(inm, etag);
    const imsMatch = inm === undefined && ims !== undefined && Date.parse(ims) >= seconds * 1000;
    if (etagMatch || imsMatch) {
      reply.header('ETag', etag).header('Last-Modified', httpDate(seconds));
      return reply.code(304).removeHeader('Content-Type').send();
    }
  }
  const body = Buffer.concat([FILES_OPEN, listing.files, Buffer.from(`${restJson}}`, 'utf8')]);
  return reply.header('ETag', etag).header('Last-Modified', httpDate(seconds)).type('application/json').send(body);
}

/** Base URLs (Host, X-Forwarded-*, X-Script-Name) kept per listing; callers choose these headers, so few are kept. */
const MAX_BASES_PER_LISTING = 8;

export function registerFilesRoutes(app: GantryApp, deps: FilesRouteDeps): void {
  const { files } = deps;
  // Polled listings cost a walk of the uploads tree, the JSON of every entry and a SHA-1 each time. The file service
  // hands out the same array while its listing is valid (local-storage.ts), so its rendering per base URL is kept with
  // it and dropped with it; a new listing is put together from the entries' kept JSON (listing-json.ts), made again
  // only for what changed. Free space is read at most once a second.
  const renderings = new WeakMap<readonly StoredEntry[], Map<string, Rendered>>();
  const json = new ListingJson();
  const usage = shortLived(() => files.diskUsage(), SCAN_REUSE_MS);

  const render = (base: string, local: readonly StoredEntry[], sd: readonly StoredFile[] = []): Rendered => {
    if (sd.length > 0) return rendered(json.render(base, [...local, ...sd]));
    let byBase = renderings.get(local);
    if (!byBase) renderings.set(local, (byBase = new Map()));
    let r = byBase.get(base);
    if (!r) {
      r = rendered(json.render(base, local));
      if (byBase.size < MAX_BASES_PER_LISTING) byBase.set(base, r);
    }
    return r;
  };

  const localEntries = (q: { recursive?: string; filter?: string; force?: string; _refresh?: string }): Promise<StoredEntry[]> =>
    files.list({ recursive: truthy(q.recursive), filter: q.filter || undefined, fresh: bypassOf(q) });

  const sdEntries = async (force: boolean): Promise<StoredFile[]> => {
    if (!deps.sdFiles || !deps.config.current.feature.sdSupport) return [];
    return deps.sdFiles.list(force);
  };

  app.get('/api/files', { config: { access: 'FILES_LIST' }, schema: { querystring: ListQuery, response: ListReply } }, async (request, reply) => {
    const q = request.query;
    const local = await localEntries(q);
    const sd = await sdEntries(truthy(q.force));
    const { free, total } = await usage.get();
    return sendConditional(request, reply, render(externalBase(request), local, sd), { free, total }, files.lastModified);
  });

  app.get('/api/files/:location', { config: { access: 'FILES_LIST' }, schema: { params: LocationParams, querystring: ListQuery, response: ListReply } },
    async (request, reply) => {
      const location = requireLocation(request.params.location, deps);
      const q = request.query;
      const base = externalBase(request);
      if (location === 'sdcard') return sendConditional(request, reply, render(base, [], await sdEntries(truthy(q.force))), {}, files.lastModified);
      const local = await localEntries(q);
      const { free, total } = await usage.get();
      return sendConditional(request, reply, render(base, local), { free, total }, files.lastModified);
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
