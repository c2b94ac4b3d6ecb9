// /api/timelapse: the timelapse folder as OctoPrint lists it. Gantry records no timelapses yet, so capture is reported
// off and nothing is unrendered; videos placed in the folder are listed and downloadable.
import { createReadStream } from 'node:fs';
import { Type } from 'typebox';
import type { GantryApp } from '../types.ts';
import type { LogFiles } from '../../system/log-files.ts';
import { DomainError } from '../../core/errors.ts';
import { externalBase } from '../urls.ts';

const VIDEO = /\.(mp4|mpg|mpeg|m4v|mkv|webm|avi|mov|gif)$/i;
const NameParams = Type.Object({ filename: Type.String() });

function humanSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(1)}${units[i]}`;
}

function formatDate(seconds: number): string {
  const d = new Date(seconds * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** `timelapseFiles` is a flat-folder view (the same safe listing the logs use) over the timelapse folder. */
export function registerTimelapseRoutes(app: GantryApp, deps: { timelapseFiles: LogFiles }): void {
  const folder = deps.timelapseFiles;

  app.get('/api/timelapse', { config: { access: 'TIMELAPSE_LIST' } }, async (request) => {
    const base = externalBase(request);
    const { files } = await folder.list();
    return {
      config: { type: 'off' },
      enabled: false,
      files: files.filter((f) => VIDEO.test(f.name)).map((f) => ({
        name: f.name, size: humanSize(f.size), bytes: f.size, date: formatDate(f.date), timestamp: f.date,
        url: `${base}/downloads/timelapse/${encodeURIComponent(f.name)}`,
      })),
      unrendered: [],
    };
  });

  app.delete('/api/timelapse/:filename', { config: { access: 'TIMELAPSE_DELETE' }, schema: { params: NameParams } }, async (request, reply) => {
    if (!VIDEO.test(request.params.filename)) throw new DomainError('NOT_FOUND', 'No such timelapse');
    await folder.delete(request.params.filename);
    return reply.code(204).send();
  });

  app.get('/downloads/timelapse/:filename', { config: { access: 'TIMELAPSE_DOWNLOAD' }, schema: { params: NameParams } }, async (request, reply) => {
    let path: string;
    try {
      if (!VIDEO.test(request.params.filename)) throw new DomainError('NOT_FOUND', 'No such timelapse');
      path = await folder.resolve(request.params.filename);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return reply.code(404).type('text/html; charset=utf-8').send('<html><title>404: Not Found</title><body>404: Not Found</body></html>');
    }
    return reply.type('application/octet-stream')
      .header('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(request.params.filename)}`)
      .send(createReadStream(path));
  });
}
