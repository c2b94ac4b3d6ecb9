// Read-only additions the web UI uses: the print history (/plugin/gantry/history), the settings fields' bounds a form
// checks before sending (/plugin/gantry/settings-rules), the setup wizard's guess of this machine's system commands
// (/plugin/gantry/command-suggestions) and slicer thumbnails served where OctoPrint's
// PrusaSlicer-thumbnails plugin serves them (/plugin/prusaslicerthumbnails/thumbnail/<path>.png).
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { FileService } from '../../files/file-service.ts';
import type { JobApi } from './job.ts';
import { readThumbnail } from '../../files/analysis/thumbnails.ts';
import { DomainError } from '../../core/errors.ts';
import { FileBytes, OpenObject } from '../../octoprint/schema-kit.ts';
import { fieldRules } from '../settings-map.ts';
import { suggestCommands } from '../../system/command-suggestions.ts';

const Params = Type.Object({ '*': Type.String() });
/** Finished prints as the history file keeps them (records of older versions may carry other keys). */
const History = Type.Object({ prints: Type.Array(OpenObject({})) });
const Rules = Type.Object({ fields: Type.Record(Type.String(), Type.Object({
  type: Type.Optional(Type.String()), min: Type.Optional(Type.Number()), max: Type.Optional(Type.Number()), required: Type.Optional(Type.Boolean()),
})) });
const NotFound = Type.Object({ error: Type.String() });
/** Recently served previews by `path@size:date`: a list of files asks for each one at once. */
const CACHE_MAX = 64;

export function registerGantryExtraRoutes(app: GantryApp, deps: { files: FileService; jobs?: JobApi }): void {
  if (deps.jobs) {
    const jobs = deps.jobs;
    app.get('/plugin/gantry/history', { config: { access: 'FILES_LIST' }, schema: { response: { 200: History } } }, async () => ({ prints: await jobs.printHistory() }));
  }

  // The same table POST /api/settings judges by, so a form's own check and the server's answer agree.
  const rules = { fields: fieldRules() };
  app.get('/plugin/gantry/settings-rules', { config: { access: 'SETTINGS_READ' }, schema: { response: { 200: Rules } } }, async () => rules);

  const Suggestions = Type.Object({ serverRestartCommand: Type.String(), systemRestartCommand: Type.String(), systemShutdownCommand: Type.String(), basis: Type.String() });
  app.get('/plugin/gantry/command-suggestions', { config: { access: 'ADMIN' }, schema: { response: { 200: Suggestions } } }, async () => suggestCommands());

  const cache = new Map<string, Buffer>();
  app.get('/plugin/prusaslicerthumbnails/thumbnail/*', { config: { access: 'FILES_DOWNLOAD' }, schema: { params: Params, response: { 200: FileBytes, 404: NotFound } } }, async (request, reply) => {
    const rel = request.params['*'];
    if (!rel.toLowerCase().endsWith('.png')) return reply.code(404).send({ error: 'Thumbnail not found' });
    const stem = rel.slice(0, -4);
    const slash = stem.lastIndexOf('/');
    try {
      // The URL names the G-code by its path without extension; the file with a stored preview in that folder is it.
      const siblings = slash < 0 ? await deps.files.list() : await deps.files.entry(stem.slice(0, slash)).then((f) => (f.kind === 'folder' ? f.children : []));
      const base = stem.slice(slash + 1);
      const file = siblings.find((e) => e.kind === 'file' && e.name.replace(/\.[^.]*$/, '') === base && typeof e.meta.thumbnail === 'string');
      if (!file || file.kind !== 'file') return reply.code(404).send({ error: 'Thumbnail not found' });
      const key = `${file.path}@${file.size}:${file.date}`;
      let png = cache.get(key);
      if (!png) {
        const thumb = await readThumbnail(await deps.files.absolutePath(file.path));
        if (!thumb) return reply.code(404).send({ error: 'Thumbnail not found' });
        png = thumb.png;
        if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
        cache.set(key, png);
      }
      // The URL carries the file's date, so a changed file gets a new URL: the picture may be cached for long.
      return reply.type('image/png').header('Cache-Control', 'private, max-age=86400').send(png);
    } catch (err) {
      if (err instanceof DomainError) return reply.code(404).send({ error: 'Thumbnail not found' });
      throw err;
    }
  });
}
