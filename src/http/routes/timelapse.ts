// /api/timelapse and /downloads/timelapse(s): OctoPrint 1.9.3's timelapse API (docs/reference/timelapse.md §2–§3)
// over the timelapse service — listing with ETag, config with save, movies, unrendered jobs, downloads and the zip
// bundle.
import { createHash } from 'node:crypto';
import { Type } from '../../config/typebox.ts';
import type { Static } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GantryApp } from '../types.ts';
import type { TimelapseService } from '../../timelapse/timelapse-service.ts';
import { isMovieName } from '../../timelapse/timelapse-folders.ts';
import { invalid } from '../../core/errors.ts';
import { fileStream } from '../../core/file-chunks.ts';
import { servedFile } from '../../core/served-file.ts';
import { externalBase, externalPrefix } from '../urls.ts';
import { sendError } from '../error-mapper.ts';
import { parseRange } from './downloads.ts';

import { isPlain } from '../../core/plain.ts';
import { FileBytes, HtmlText, NoContent, OpenObject } from '../../octoprint/schema-kit.ts';
import { etagMatches } from '../conditional.ts';

const FilenameParams = Type.Object({ filename: Type.String() });
const NameParams = Type.Object({ name: Type.String() });
const ListQuery = Type.Object({ unrendered: Type.Optional(Type.String()), force: Type.Optional(Type.String()) }, { additionalProperties: true });

const Movie = Type.Object({
  name: Type.String(), size: Type.String(), bytes: Type.Number(), date: Type.String(), timestamp: Type.Number(), url: Type.String(),
  thumbnail: Type.Optional(Type.String()),
});
const Unrendered = Type.Object({
  name: Type.String(), count: Type.Number(), bytes: Type.Number(), size: Type.String(), date: Type.String(),
  recording: Type.Boolean(), rendering: Type.Boolean(), processing: Type.Boolean(),
});
/** The capture config is `{type: 'off'}` or the type's own parameters. */
const Listing = Type.Object({
  config: OpenObject({ type: Type.String() }), enabled: Type.Boolean(), files: Type.Array(Movie), unrendered: Type.Optional(Type.Array(Unrendered)),
});
/** A download: the bytes (200, or 206 for a range), 304 when the client's copy is current, an HTML page when missing. */
const Download = { 200: FileBytes, 206: FileBytes, 304: NoContent, 404: HtmlText, 416: HtmlText };

/** OctoPrint's is_truthy: true, "true", "yes", "y", "1", "on" (any case). */
function truthy(v: unknown): boolean {
  if (v === true || v === 1) return true;
  return typeof v === 'string' && ['true', 'yes', 'y', '1', 'on'].includes(v.trim().toLowerCase());
}

function htmlError(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(`<html><title>${status}: ${text}</title><body>${status}: ${text}</body></html>`);
}

async function ignoreEmptyJson(request: FastifyRequest): Promise<void> {
  if (request.headers['content-length'] === '0') delete request.headers['content-type'];
}

export function registerTimelapseRoutes(app: GantryApp, deps: { timelapse?: TimelapseService }): void {
  const tl = deps.timelapse;
  if (!tl) return;

  async function listing(request: FastifyRequest, unrendered: boolean): Promise<Static<typeof Listing>> {
    const body: Static<typeof Listing> = { config: tl!.current(), enabled: tl!.enabled(), files: await tl!.listMovies(externalPrefix(request)) };
    if (unrendered) body.unrendered = await tl!.listUnrendered();
    return body;
  }

  // Serialised here (for the ETag over the whole answer); the schema says what that writes.
  app.get('/api/timelapse', { config: { access: 'TIMELAPSE_LIST' }, schema: { querystring: ListQuery, response: { 200: Listing, 304: NoContent } } }, async (request, reply) => {
    const unrendered = truthy(request.query.unrendered);
    const body = await listing(request, unrendered);
    const text = JSON.stringify(body);
    // Over the whole answer (folders, flags, config), so recording/rendering changes revalidate too.
    const etag = `"${createHash('sha1').update(`v1:${text}`).digest('hex')}"`;
    const mtime = await tl.mtime(unrendered);
    reply.header('ETag', etag).header('Cache-Control', 'max-age=0');
    if (mtime > 0) reply.header('Last-Modified', new Date(Math.floor(mtime / 1000) * 1000).toUTCString());
    if (!truthy(request.query.force) && etagMatches(request.headers['if-none-match'], etag)) {
      return reply.code(304).send();
    }
    return (reply as FastifyReply).type('application/json; charset=utf-8').send(text);
  });

  // JSON or form fields (`type=timed&interval=3`), as 1.9.3 accepts both; form parsing stays inside this scope.
  void app.register(async (scope) => {
    if (!scope.hasContentTypeParser('application/x-www-form-urlencoded')) {
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
    }
    scope.post('/api/timelapse', { config: { access: 'TIMELAPSE_ADMIN' }, onRequest: ignoreEmptyJson,
      schema: { body: Type.Unknown(), response: { 200: Listing } } }, async (request) => {
        const body = request.body ?? {};
        if (!isPlain(body)) throw invalid('Expected a JSON object or form fields');
        // `save` by anyone outside the admins group is ignored: the config applies but is not written.
        const save = truthy(body.save) && request.identity.groups.includes('admins');
        await tl.configure(body, save);
        return listing(request, false);
      });

    scope.post('/downloads/timelapses', { config: { access: 'TIMELAPSE_LIST' }, onRequest: ignoreEmptyJson,
      schema: { body: Type.Unknown(), response: { 200: FileBytes } } },
      async (request, reply) => {
        const body = isPlain(request.body) ? request.body : {};
        return bundle(reply, [...filesParam(request.query), ...filesParam(body)]);
      });
  });

  app.delete('/api/timelapse/:filename', { config: { access: 'TIMELAPSE_DELETE' }, schema: { params: FilenameParams, response: { 200: Listing } } }, async (request, reply) => {
    const name = request.params.filename;
    if (name.includes('/')) return sendError(reply, 404);
    await tl.deleteMovie(name);
    return listing(request, false);
  });

  app.get('/api/timelapse/:filename', { config: { access: 'TIMELAPSE_DOWNLOAD' }, schema: { params: FilenameParams, response: { 302: NoContent } } }, async (request, reply) => {
    const name = request.params.filename;
    if (name.includes('/')) return sendError(reply, 404);
    const q = request.url.indexOf('?');
    return reply.redirect(`${externalBase(request)}/downloads/timelapse/${encodeURIComponent(name)}${q === -1 ? '' : request.url.slice(q)}`, 302);
  });

  app.delete('/api/timelapse/unrendered/:name', { config: { access: 'TIMELAPSE_MANAGE_UNRENDERED' },
    schema: { params: NameParams, response: { 204: NoContent } } }, async (request, reply) => {
    await tl.deleteUnrendered(request.params.name);
    return reply.code(204).type('text/plain').send('');
  });

  app.post('/api/timelapse/unrendered/:name', { config: { access: 'TIMELAPSE_MANAGE_UNRENDERED' },
    schema: { params: NameParams, body: Type.Unknown(), response: { 204: NoContent } } },
    async (request, reply) => {
      const body = request.body;
      if (!isPlain(body)) return sendError(reply, 400);
      if (body.command !== 'render') throw invalid('command is invalid');
      tl.renderUnrendered(request.params.name);
      return reply.code(204).type('text/plain').send('');
    });

  app.get('/downloads/timelapse/:filename', { config: { access: 'TIMELAPSE_LIST' }, schema: { params: FilenameParams, response: Download } }, async (request, reply) => {
    const name = request.params.filename;
    const requested = tl.downloadPath(name);
    if (requested === null) return htmlError(reply, 404, 'Not Found');
    const served = await servedFile(tl.moviesDir, requested);
    if (!served) return htmlError(reply, 404, 'Not Found');
    const { path, stats: st } = served;
    const etag = `"${Math.floor(st.mtimeMs / 1000)}"`;
    reply.header('Content-Disposition', `attachment; filename="${name.replace(/["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`)
      .header('ETag', etag).header('Last-Modified', st.mtime.toUTCString()).header('Accept-Ranges', 'bytes')
      .header('Cache-Control', 'max-age=0, must-revalidate, private').header('Expires', '-1')
      .type(name.endsWith('.jpg') ? 'image/jpeg' : name.toLowerCase().endsWith('.mp4') || name.toLowerCase().endsWith('.m4v') ? 'video/mp4'
        : name.toLowerCase().endsWith('.mkv') ? 'video/x-matroska' : 'video/mpeg');
    if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    const range = parseRange(request.headers.range, st.size);
    if (range === null) return reply.code(416).header('Content-Range', `bytes */${st.size}`).send('');
    if (range) {
      return reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${st.size}`)
        .header('Content-Length', range.end - range.start + 1).send(fileStream(path, { start: range.start, end: range.end + 1 }));
    }
    return reply.header('Content-Length', st.size).send(fileStream(path));
  });

  app.get('/downloads/timelapses', { config: { access: 'TIMELAPSE_LIST' }, schema: { response: { 200: FileBytes } } }, async (request, reply) => bundle(reply, filesParam(request.query)));

  function filesParam(source: unknown): string[] {
    if (!isPlain(source)) return [];
    const v = source.files;
    if (typeof v === 'string') return v.split(',').filter(Boolean);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  }

  /** Several movies as `octoprint-timelapses.zip`, files at the archive root. */
  async function bundle(reply: FastifyReply, names: string[]): Promise<FastifyReply> {
    if (names.length === 0) return sendError(reply, 400, 'No files to download given');
    const paths: Array<[string, string]> = [];
    for (const n of names) {
      if (!isMovieName(n)) return sendError(reply, 400, `Invalid timelapse file name: ${n}`);
      const p = tl!.downloadPath(n);
      const served = p === null ? undefined : await servedFile(tl!.moviesDir, p);
      if (!served) return sendError(reply, 400, `No such timelapse: ${n}`);
      paths.push([served.path, n]);
    }
    // yazl is loaded on use: only this route needs it. Through `default`: yazl is CommonJS, and in dist/ a dynamic
    // import of a bundled CommonJS module has no named exports (`ZipFile is not a constructor` in the built server).
    const { ZipFile } = (await import('yazl')).default;
    const zip = new ZipFile();
    for (const [p, n] of paths) zip.addFile(p, n, { compress: false });
    zip.end();
    return reply.type('application/zip')
      .header('Content-Disposition', 'attachment; filename="octoprint-timelapses.zip"; filename*=UTF-8\'\'octoprint-timelapses.zip')
      .send(zip.outputStream);
  }
}
