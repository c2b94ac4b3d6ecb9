// POST /api/files/{location}: reads the multipart form (the file part streamed to a temp file) and answers with what
// the files service made of it (src/files/upload-policy.ts: folder creation, storing, SD transfer, select/print).
import { Type } from '../../config/typebox.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GantryApp } from '../types.ts';
import { DomainError, ErrorCodes, invalid, notFound, storageProblem } from '../../core/errors.ts';
import { acceptUpload, type UploadForm } from '../../files/upload-policy.ts';
import { readMultipart, boundaryOf, decodeHeaderText, MultipartError } from '../multipart.ts';
import { abridged, resourceUrl, UploadReplySchema } from '../../octoprint/file-entry.ts';
import { HtmlText } from '../../octoprint/schema-kit.ts';
import { externalBase } from '../urls.ts';
import type { FilesRouteDeps } from './files.ts';

const MAX_FIELD_BYTES = 1024 * 1024;
/** All non-file fields together: a form of many small fields must not grow memory without bound either. */
const MAX_FORM_FIELD_BYTES = 4 * 1024 * 1024;
/**
 * Parts in one upload form (OctoPrint's forms have a handful). Each costs parsing and events whatever it holds: a form
 * of 100,000 empty parts took seconds of CPU before its fields' size gave out.
 */
const MAX_FORM_PARTS = 1000;
/** What a field costs besides its name and value (its map entry, strings' headers), counted against that limit. */
const FIELD_OVERHEAD_BYTES = 64;
const LocationParams = Type.Object({ location: Type.String() });

type ParsedForm = UploadForm;

/** Reads the whole form; the file part goes to disk chunk by chunk, fields stay in memory (bounded). */
async function readForm(request: FastifyRequest, boundary: string, deps: FilesRouteDeps): Promise<ParsedForm> {
  const form: ParsedForm = { fields: new Map() };
  let target: 'file' | 'field' | 'skip' = 'skip';
  let fieldName = '';
  let fieldChunks: Buffer[] = [];
  let fieldSize = 0;
  let formFieldBytes = 0;
  let parts = 0;
  try {
    for await (const ev of readMultipart(request.raw, boundary)) {
      if (ev.type === 'part') {
        if (++parts > MAX_FORM_PARTS) throw invalid(`Too many parts in the form (at most ${MAX_FORM_PARTS})`);
        if (ev.part.filename !== undefined) {
          if (ev.part.name === 'file' && !form.sink) {
            form.sink = await deps.files.newUploadSink();
            form.partFilename = ev.part.filename;
            target = 'file';
          } else {
            target = 'skip';
          }
        } else {
          target = 'field';
          fieldName = ev.part.name;
          fieldChunks = [];
          fieldSize = 0;
          // A field's name and its place in the map count too: a million empty fields are no smaller than their names.
          formFieldBytes += Buffer.byteLength(fieldName) + FIELD_OVERHEAD_BYTES;
          if (formFieldBytes > MAX_FORM_FIELD_BYTES) throw invalid('Form fields are too large');
        }
      } else if (ev.type === 'data') {
        if (target === 'file') await form.sink!.write(ev.chunk);
        else if (target === 'field') {
          fieldSize += ev.chunk.length;
          formFieldBytes += ev.chunk.length;
          if (fieldSize > MAX_FIELD_BYTES) throw invalid(`Form field ${fieldName} is too large`);
          if (formFieldBytes > MAX_FORM_FIELD_BYTES) throw invalid('Form fields are too large');
          fieldChunks.push(Buffer.from(ev.chunk));
        }
      } else if (target === 'field' && !form.fields.has(fieldName)) {
        form.fields.set(fieldName, decodeHeaderText(Buffer.concat(fieldChunks)));
      }
    }
  } catch (err) {
    await form.sink?.discard();
    if (err instanceof MultipartError) throw invalid(err.message);
    if (err instanceof DomainError || storageProblem(err)) throw err;
    // The client went away mid-upload (aborted request): nothing is kept.
    throw new DomainError(ErrorCodes.INVALID_REQUEST, 'Upload was interrupted', { cause: err });
  }
  return form;
}

export function registerUploadRoute(app: GantryApp, deps: FilesRouteDeps): void {
  const { config } = deps;

  void app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    // Our own streaming parser reads the body; the globally registered multipart plugin must not.
    if (scope.hasContentTypeParser('multipart/form-data')) scope.removeContentTypeParser('multipart/form-data');
    scope.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null, undefined));

    scope.post('/api/files/:location', { config: { access: 'FILES_UPLOAD' }, schema: { params: LocationParams, response: { 201: UploadReplySchema, 411: HtmlText } } },
      async (request, reply) => {
        const location = request.params.location;
        if (location !== 'local' && location !== 'sdcard') throw notFound('Unknown location');
        if (location === 'sdcard' && !config.current.feature.sdSupport) throw notFound('SD support is disabled');
        const boundary = boundaryOf(request.headers['content-type']);
        if (!boundary) throw invalid('No file to upload and no folder to create');
        if (request.headers['content-length'] === undefined) {
          return reply.code(411).header('Connection', 'close').type('text/html; charset=utf-8')
            .send('<html><title>411: Length Required</title><body>411: Length Required</body></html>');
        }
        const limit = config.current.server.uploads.maxSize;
        if (Number(request.headers['content-length']) > limit + 1024 * 1024) {
          reply.header('Connection', 'close');
          throw new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, 'Upload exceeds the maximum upload size');
        }
        let form: ParsedForm;
        try {
          form = await readForm(request, boundary, deps);
        } catch (err) {
          reply.header('Connection', 'close');
          throw err;
        }
        return handleForm(request, reply, deps, location, form);
      });
  });
}

async function handleForm(request: FastifyRequest, reply: FastifyReply, deps: FilesRouteDeps, location: 'local' | 'sdcard', form: ParsedForm) {
  const id = request.identity;
  const power = deps.power;
  const outcome = await acceptUpload({ ...deps, logger: request.log, ...(power ? { beforeUploadPrint: () => power.beforeUploadPrint() } : {}) }, location, form,
    { user: id.name, mayOverwrite: id.has('FILES_DELETE'), maySelect: id.has('FILES_SELECT'), mayPrint: id.has('PRINT') });
  const base = externalBase(request);
  if (outcome.kind === 'folder') {
    const { folder } = outcome;
    return reply.code(201).header('Location', resourceUrl(base, 'local', folder.path)).send({
      folder: { name: folder.name, path: folder.path, origin: 'local', refs: { resource: resourceUrl(base, 'local', folder.path) } },
      done: true,
    });
  }
  const { stored, sdName, done, effectiveSelect, effectivePrint } = outcome;
  const answer: Record<string, unknown> = { local: abridged(base, 'local', stored.name, stored.path) };
  if (sdName !== undefined) answer.sdcard = abridged(base, 'sdcard', sdName, sdName);
  const location201 = sdName !== undefined ? resourceUrl(base, 'sdcard', sdName) : resourceUrl(base, 'local', stored.path);
  return reply.code(201).header('Location', location201).send({ files: answer, done, effectiveSelect, effectivePrint });
}
