// /api/logs (list, delete) and /downloads/logs/{filename}: the logs folder for admins, never a path outside it.
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { LogFiles } from '../../system/log-files.ts';
import { fileStream } from '../../core/file-chunks.ts';
import { DomainError } from '../../core/errors.ts';
import { externalBase } from '../urls.ts';
import { FileBytes, HtmlText, NoContent } from '../../octoprint/schema-kit.ts';

const NameParams = Type.Object({ filename: Type.String() });
const LogList = Type.Object({
  files: Type.Array(Type.Object({ name: Type.String(), size: Type.Number(), date: Type.Number(),
    refs: Type.Object({ resource: Type.String(), download: Type.String() }) })),
  free: Type.Number(),
});

export function registerLogRoutes(app: GantryApp, deps: { logFiles: LogFiles }): void {
  const logs = deps.logFiles;

  // OctoPrint ≥1.3.7 serves the same resource from its logging plugin; older clients use /api/logs.
  for (const prefix of ['/api/logs', '/plugin/logging/logs']) {
    app.get(prefix, { config: { access: 'ADMIN' }, schema: { response: { 200: LogList } } }, async (request) => {
      const base = externalBase(request);
      const { files, free } = await logs.list();
      return {
        files: files.map((f) => ({
          ...f,
          refs: {
            resource: `${base}${prefix}/${encodeURIComponent(f.name)}`,
            download: `${base}/downloads/logs/${encodeURIComponent(f.name)}`,
          },
        })),
        free,
      };
    });

    app.delete(`${prefix}/:filename`, { config: { access: 'ADMIN' }, schema: { params: NameParams, response: { 204: NoContent } } }, async (request, reply) => {
      await logs.delete(request.params.filename);
      return reply.code(204).send();
    });
  }

  app.get('/downloads/logs/:filename', { config: { access: 'ADMIN' },
    schema: { params: NameParams, response: { 200: FileBytes, 404: HtmlText } } }, async (request, reply) => {
    let path: string;
    try {
      path = await logs.resolve(request.params.filename);
    } catch (err) {
      // Download handlers answer like a static file server: a small HTML page, not JSON.
      if (!(err instanceof DomainError)) throw err;
      return reply.code(404).type('text/html; charset=utf-8').send('<html><title>404: Not Found</title><body>404: Not Found</body></html>');
    }
    const safeName = request.params.filename.replace(/[^\w.-]/g, '_');
    return reply
      .type('text/plain; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="${safeName}"; filename*=UTF-8''${encodeURIComponent(request.params.filename)}`)
      .send(fileStream(path));
  });
}
