// /downloads/files/local/{path}: raw file download as an attachment, with single-range requests (206) for clients
// that fetch in chunks (FDM Monster). Errors here are small HTML pages, as OctoPrint's download handler sends them.
import { Type } from '../../config/typebox.ts';
import type { FastifyReply } from 'fastify';
import type { GantryApp } from '../types.ts';
import type { FileService } from '../../files/file-service.ts';
import { DomainError } from '../../core/errors.ts';
import { fileStream } from '../../core/file-chunks.ts';
import { servedFile } from '../../core/served-file.ts';
import { FileBytes, HtmlText, NoContent } from '../../octoprint/schema-kit.ts';
import { etagMatches } from '../conditional.ts';

const Params = Type.Object({ '*': Type.String() });

/** The bytes (200, or 206 for a range), 304 when the client's copy is current; errors are HTML pages. */
const Download = { 200: FileBytes, 206: FileBytes, 304: NoContent, 404: HtmlText, 416: HtmlText };

function htmlError(reply: FastifyReply, status: number, text: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(`<html><title>${status}: ${text}</title><body>${status}: ${text}</body></html>`);
}

/** Parses a single `bytes=` range against a size; undefined = ignore the header, null = unsatisfiable. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return null;
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return null;
  return { start, end };
}

export function registerDownloadRoutes(app: GantryApp, deps: { files: FileService }): void {
  app.get('/downloads/files/local/*', { config: { access: 'FILES_DOWNLOAD' }, schema: { params: Params, response: Download } }, async (request, reply) => {
    let requested: string;
    try {
      requested = await deps.files.absolutePath(request.params['*']);
    } catch (err) {
      if (err instanceof DomainError) return htmlError(reply, 404, 'Not Found');
      throw err;
    }
    // A link in the uploads folder is served only when it leads to a file inside the folder.
    const served = await servedFile(deps.files.uploadsRoot, requested);
    if (!served) return htmlError(reply, 404, 'Not Found');
    const { path: abs, stats: st } = served;
    const name = requested.slice(requested.lastIndexOf('/') + 1);
    const asciiName = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
    const etag = `"${Math.floor(st.mtimeMs)}"`;
    reply.header('Content-Disposition', `attachment; filename="${asciiName}"; filename*=UTF-8''${encodeURIComponent(name)}`)
      .header('ETag', etag)
      .header('Last-Modified', st.mtime.toUTCString())
      .header('Accept-Ranges', 'bytes')
      .header('Cache-Control', 'max-age=0, must-revalidate, private')
      .type(/\.(gcode|gco|g)$/i.test(name) ? 'text/plain' : 'application/octet-stream');
    if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    const ifRange = request.headers['if-range'];
    const range = ifRange && ifRange !== etag ? undefined : parseRange(request.headers.range, st.size);
    if (range === null) {
      return reply.code(416).header('Content-Range', `bytes */${st.size}`).send('');
    }
    if (range) {
      reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${st.size}`)
        .header('Content-Length', String(range.end - range.start + 1));
      return reply.send(fileStream(abs, { start: range.start, end: range.end + 1 }));
    }
    reply.header('Content-Length', String(st.size));
    return reply.send(fileStream(abs));
  });
}
