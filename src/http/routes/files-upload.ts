// POST /api/files/{location}: multipart upload (streamed to a temp file, renamed into place when complete) or folder
// creation; then optional select/print through the job runner, SD transfer, and the `Upload` event.
import { Type } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GantryApp } from '../types.ts';
import { DomainError, ErrorCodes, invalid, notFound } from '../../core/errors.ts';
import type { UploadSink } from '../../files/upload-intake.ts';
import { readMultipart, boundaryOf, decodeHeaderText, MultipartError } from './files-multipart.ts';
import { abridged, resourceUrl } from './files-entries.ts';
import type { FilesRouteDeps } from './files.ts';
import { truthy } from '../../core/values.ts';

const MAX_FIELD_BYTES = 1024 * 1024;
/** All non-file fields together: a form of many small fields must not grow memory without bound either. */
const MAX_FORM_FIELD_BYTES = 4 * 1024 * 1024;
const LocationParams = Type.Object({ location: Type.String() });

interface ParsedForm {
  sink?: UploadSink;
  partFilename?: string;
  fields: Map<string, string>;
}

/** Reads the whole form; the file part goes to disk chunk by chunk, fields stay in memory (bounded). */
async function readForm(request: FastifyRequest, boundary: string, deps: FilesRouteDeps): Promise<ParsedForm> {
  const form: ParsedForm = { fields: new Map() };
  let target: 'file' | 'field' | 'skip' = 'skip';
  let fieldName = '';
  let fieldChunks: Buffer[] = [];
  let fieldSize = 0;
  let formFieldBytes = 0;
  try {
    for await (const ev of readMultipart(request.raw, boundary)) {
      if (ev.type === 'part') {
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
    if (err instanceof DomainError) throw err;
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

    scope.post('/api/files/:location', { config: { access: 'FILES_UPLOAD' }, schema: { params: LocationParams } },
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
  const { files } = deps;
  const { fields, sink } = form;
  let userdata: unknown;
  const userdataRaw = fields.get('userdata');
  if (userdataRaw !== undefined) {
    try {
      userdata = JSON.parse(userdataRaw);
    } catch {
      await sink?.discard();
      throw invalid('userdata contains invalid JSON');
    }
  }

  if (!sink) {
    const foldername = fields.get('foldername');
    if (foldername === undefined) throw invalid('No file to upload and no folder to create');
    if (location !== 'local') throw invalid('target is invalid');
    const folder = await files.createFolder(fields.get('path'), foldername);
    return reply.code(201).header('Location', resourceUrl(request, 'local', folder.path)).send({
      folder: { name: folder.name, path: folder.path, origin: 'local', refs: { resource: resourceUrl(request, 'local', folder.path) } },
      done: true,
    });
  }

  try {
    if (location === 'sdcard') {
      if (!deps.sdFiles) throw new DomainError(ErrorCodes.CONFLICT, 'Can not upload to SD card, printer is either not operational or already busy');
      deps.sdFiles.checkUploadable();
    }
  } catch (err) {
    await sink.discard();
    throw err;
  }
  const id = request.identity;
  const stored = await files.storeUpload(sink, {
    folder: fields.get('path') || undefined,
    filename: fields.get('filename') || form.partFilename || '',
    userdata,
    noOverwrite: truthy(fields.get('noOverwrite')),
    mayOverwrite: id.has('FILES_DELETE'),
  });

  const askedSelect = truthy(fields.get('select'));
  const askedPrint = truthy(fields.get('print'));
  const wantSelect = askedSelect && id.has('FILES_SELECT');
  const wantPrint = askedPrint && id.has('PRINT');
  let effectiveSelect = false;
  let effectivePrint = false;
  const answer: Record<string, unknown> = { local: abridged(request, 'local', stored.name, stored.path) };
  let location201 = resourceUrl(request, 'local', stored.path);
  let done = true;

  if (location === 'sdcard' && deps.sdFiles) {
    const remote = await deps.sdFiles.upload(stored.path, { select: wantSelect || wantPrint, print: wantPrint, user: id.name });
    answer.sdcard = abridged(request, 'sdcard', remote, remote);
    location201 = resourceUrl(request, 'sdcard', remote);
    done = false;
    effectiveSelect = wantSelect || wantPrint;
    effectivePrint = wantPrint;
  } else if ((wantSelect || wantPrint) && deps.jobs?.isReady()) {
    try {
      await deps.jobs.select('local', stored.path, { print: wantPrint, user: id.name });
      effectiveSelect = true;
      effectivePrint = wantPrint;
    } catch (err) {
      request.log.info({ err }, 'select/print after upload dropped');
    }
  }

  files.announceUpload({
    name: stored.name, path: stored.path, target: location, select: askedSelect, print: askedPrint,
    effective_select: effectiveSelect, effective_print: effectivePrint, ...(userdata !== undefined ? { userdata } : {}),
  });
  return reply.code(201).header('Location', location201).send({ files: answer, done, effectiveSelect, effectivePrint });
}
