// /api/languages: list, upload (multipart `file`: zip, tar.gz, tgz, tar) and delete language packs.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type {} from '@fastify/multipart';
import { readingMultipart } from '../multipart-errors.ts';
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { LanguagePacks } from '../../system/language-packs.ts';
import { archiveKind } from '../../system/archive-extract.ts';
import { sendError } from '../error-mapper.ts';

/** The limit OctoPrint applies to language pack uploads. */
const MAX_PACK_UPLOAD = 5 * 1024 * 1024;

const Language = Type.Object({
  locale: Type.String(), locale_display: Type.String(), locale_english: Type.String(), last_update: Type.Optional(Type.Number()),
  author: Type.Optional(Type.String()),
});
const Listing = Type.Object({
  language_packs: Type.Object({}, {
    additionalProperties: Type.Object({ identifier: Type.String(), display: Type.String(), name: Type.String(), languages: Type.Array(Language) }),
  }),
});

const DeleteParams = Type.Object({ locale: Type.String(), pack: Type.String() });

export function registerLanguageRoutes(app: GantryApp, deps: { languagePacks: LanguagePacks }): void {
  const packs = deps.languagePacks;

  const listing = async () => {
    const components = await packs.list();
    // docs/reference/interface-spec.md's table (Language packs) calls the display name `display`, its examples
    // `name`; clients read either.
    const language_packs = Object.fromEntries(Object.entries(components).map(([id, c]) => [id, { ...c, name: c.display }]));
    return { language_packs };
  };

  app.get('/api/languages', { config: { access: 'SETTINGS' }, schema: { response: { 200: Listing } } }, listing);

  app.post('/api/languages', { config: { access: 'SETTINGS' }, schema: { response: { 200: Listing } } }, async (request, reply) => {
    if (!request.isMultipart()) return sendError(reply, 400, 'Expected a multipart/form-data upload with a "file" field');
    const part = await readingMultipart(() => request.file({ limits: { fileSize: MAX_PACK_UPLOAD, files: 1 } }));
    if (!part || part.fieldname !== 'file') {
      part?.file.resume();
      return sendError(reply, 400, 'No file included');
    }
    if (!archiveKind(part.filename)) {
      part.file.resume();
      return sendError(reply, 400, 'Invalid language pack, must be a zip, tar.gz, tgz or tar file');
    }
    const work = await packs.workDir();
    const archive = join(work, 'upload');
    try {
      await readingMultipart(() => pipeline(part.file, createWriteStream(archive)));
      if (part.file.truncated) {
        await rm(work, { recursive: true, force: true });
        return sendError(reply, 413, 'Language pack too large');
      }
    } catch (err) {
      await rm(work, { recursive: true, force: true });
      throw err;
    }
    await packs.install(archive, part.filename, work);
    return listing();
  });

  app.delete('/api/languages/:locale/:pack', { config: { access: 'SETTINGS' }, schema: { params: DeleteParams, response: { 200: Listing } } }, async (request) => {
    await packs.delete(request.params.locale, request.params.pack);
    return listing();
  });
}
