// Moonraker's HTTP mirror (docs/reference/moonraker.md §1.4): every method at its path (`server.files.get_directory`
// → GET /server/files/directory), arguments from the query (with `:int`-style hints) and the JSON body, answers
// wrapped in {result}, errors as {error: {code, message}}; plus upload, download, /server/jsonrpc and CORS.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { stat } from 'node:fs/promises';
import { fileStream } from '../core/file-chunks.ts';
import { acceptUpload } from '../files/upload-policy.ts';
import type { UploadSink } from '../files/upload-intake.ts';
import { DomainError, ErrorCodes, storageProblem } from '../core/errors.ts';
import { isPlain, setOwn, type Plain } from '../core/plain.ts';
import type { MoonrakerDeps } from './moonraker-deps.ts';
import { credentialsOf, type CallContext, type MoonrakerService } from './moonraker-service.ts';
import { GCODES, inGcodes, itemOf, trimSlashes } from './file-methods.ts';
import { RpcError, forbiddenRpc, httpStatusOf, unauthorized } from './rpc-errors.ts';

/** Verb and path of each method, by Moonraker's naming rule. */
export function httpRouteOf(name: string): { verbs: Array<'GET' | 'POST' | 'DELETE'>; path: string } {
  const parts = name.split('.');
  const last = parts[parts.length - 1];
  const verb = /^(get|post|delete)_(.+)$/.exec(last);
  if (verb) {
    parts[parts.length - 1] = verb[2];
    return { verbs: [verb[1].toUpperCase() as 'GET' | 'POST' | 'DELETE'], path: `/${parts.join('/')}` };
  }
  // Klipper's own endpoints and Moonraker's read methods take both; the UIs use GET to read and POST to act.
  return { verbs: ['GET', 'POST'], path: `/${parts.join('/')}` };
}

const PREFIXES = ['/printer', '/server', '/machine', '/access'];

/** Query arguments: strings, or typed by a `name:int|float|bool|json` suffix. */
function queryArgs(search: URLSearchParams): Plain {
  const out: Plain = {};
  for (const [rawKey, value] of search) {
    const colon = rawKey.lastIndexOf(':');
    const hint = colon > 0 ? rawKey.slice(colon + 1) : '';
    const key = ['int', 'float', 'bool', 'json'].includes(hint) ? rawKey.slice(0, colon) : rawKey;
    if (['token', 'access_token', 'connection_id', '_'].includes(key)) continue;
    let v: unknown = value;
    try {
      if (hint === 'int') v = parseInt(value, 10);
      else if (hint === 'float') v = Number(value);
      else if (hint === 'bool') v = value.toLowerCase() === 'true';
      else if (hint === 'json') v = JSON.parse(value);
    } catch {
      throw new RpcError(400, `Invalid value for ${key}`);
    }
    if (Array.isArray(out[key])) (out[key] as unknown[]).push(v);
    else if (Object.hasOwn(out, key)) setOwn(out, key, [out[key], v]);
    else setOwn(out, key, v);
  }
  return out;
}

/** `?toolhead&extruder=target,temperature` → objects for printer.objects.query. */
function objectsQuery(search: URLSearchParams): Plain {
  const objects: Plain = {};
  for (const [k, v] of search) {
    if (['token', 'access_token', '_'].includes(k)) continue;
    setOwn(objects, k, v === '' ? null : v.split(','));
  }
  return { objects };
}

function sendError(reply: FastifyReply, err: unknown): FastifyReply {
  // Fastify's own refusals (a body that is not JSON, too large) carry their status.
  const own = (err as { statusCode?: unknown }).statusCode;
  if (!(err instanceof RpcError) && !(err instanceof DomainError) && typeof own === 'number' && own >= 400 && own < 500) {
    return reply.code(own).type('application/json').send({ error: { code: own, message: (err as Error).message } });
  }
  const status = httpStatusOf(err);
  const message = err instanceof RpcError || err instanceof DomainError ? err.message : storageProblem(err) ? 'Not enough space on the disk' : 'Internal Server Error';
  return reply.code(status).type('application/json').send({ error: { code: status, message } });
}

/** `prefix`: '' (the default printer, at the root) or a farm printer's path (`/printer/NAME`), before every route. */
export function registerMoonrakerRoutes(app: FastifyInstance, service: MoonrakerService, deps: MoonrakerDeps, prefix = ''): void {
  const ctxOf = (request: FastifyRequest): CallContext => {
    const url = new URL(request.raw.url ?? '/', 'http://x');
    return { caller: service.auth.resolve(credentialsOf(request.headers, url.searchParams, request.ip)), address: request.ip };
  };

  void app.register(async (scope) => {
    // CORS for browsers on other origins (Fluidd from app.fluidd.xyz): allowed ones get their origin echoed.
    scope.addHook('onRequest', (request, reply, done) => {
      const origin = request.headers.origin;
      if (origin && !deps.config.current.api.allowCrossOrigin && service.originAllowed(origin, request.headers.host) && service.corsAllows(origin)) {
        reply.header('Access-Control-Allow-Origin', origin).header('Vary', 'Origin');
        if (request.method === 'OPTIONS') {
          reply.header('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, OPTIONS')
            .header('Access-Control-Allow-Headers', 'Origin, Accept, Content-Type, X-Requested-With, X-CRSF-Token, Authorization, X-Access-Token, X-Api-Key')
            .header('Access-Control-Max-Age', '10');
          if (request.headers['access-control-request-private-network']) reply.header('Access-Control-Allow-Private-Network', 'true');
          reply.code(204).send();
          return;
        }
      }
      done();
    });
    scope.setErrorHandler((err, _request, reply) => sendError(reply, err));
    // Bodies parsed here, not by the app's parser (whose prototype-key scan recurses: a deeply nested body overflowed
    // the stack into a 500); /server/jsonrpc gets the text itself.
    const rawBodies = new WeakMap<object, string>();
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      const text = body as string;
      if (text.length === 0) return done(null, undefined);
      rawBodies.set(request, text);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new RpcError(400, 'Body is not valid JSON'), undefined);
      }
    });
    // Unknown paths under Moonraker's prefixes answer in its shape (a JSON 404), whatever the verb.
    for (const prefix of PREFIXES) {
      scope.route({ method: ['GET', 'POST', 'DELETE', 'PUT', 'OPTIONS'], url: `${prefix}/*`, config: { access: 'public' },
        handler: (_request, reply) => reply.code(404).send({ error: { code: 404, message: 'Not Found' } }) });
    }

    const answer = async (request: FastifyRequest, reply: FastifyReply, name: string, params: Plain) => {
      const result = await service.call(name, params, ctxOf(request), false);
      if (result === undefined || result === null) return reply.code(204).send();
      return reply.type('application/json').send({ result });
    };

    const done = new Set<string>();
    for (const name of service.methodNames()) {
      const { verbs, path } = httpRouteOf(name);
      if (!PREFIXES.some((p) => path.startsWith(`${p}/`))) continue;
      for (const verb of verbs) {
        const key = `${verb} ${path}`;
        if (done.has(key)) continue;
        done.add(key);
        scope.route({
          method: verb, url: path, config: { access: 'public' },
          handler: async (request, reply) => {
            const url = new URL(request.raw.url ?? '/', 'http://x');
            const fromQuery = name === 'printer.objects.query' && request.method === 'GET' ? objectsQuery(url.searchParams) : queryArgs(url.searchParams);
            const body = request.body;
            if (body !== undefined && body !== null && !isPlain(body)) throw new RpcError(400, 'The body must be a JSON object');
            return answer(request, reply, name, { ...fromQuery, ...(body as Plain | undefined) });
          },
        });
      }
    }

    // JSON-RPC over HTTP: always 200 with a JSON-RPC body.
    scope.post('/server/jsonrpc', { config: { access: 'public' } }, async (request, reply) => {
      const ctx = ctxOf(request);
      const text = rawBodies.get(request) ?? 'null';
      const out = await service.handleFrame(text, ctx);
      return reply.type('application/json').send(out ?? { jsonrpc: '2.0', result: 'ok', id: null });
    });

    // Downloads (and the thumbnails beside the G-code) and deletes: /server/files/<root>/<path>.
    scope.get('/server/files/*', { config: { access: 'public' } }, async (request, reply) => {
      const rest = (request.params as { '*': string })['*'];
      if (!rest.startsWith(`${GCODES}/`)) throw new RpcError(404, `File not found: ${rest}`);
      const ctx = ctxOf(request);
      if (!service.auth.authenticated(ctx.caller)) throw unauthorized();
      if (!ctx.caller.identity.has('FILES_DOWNLOAD')) throw forbiddenRpc();
      const rel = inGcodes(rest);
      if (/(?:^|\/)\.thumbs\//.test(rel)) {
        const png = await service.fileMethods.thumbnail(rel);
        if (!png) throw new RpcError(404, `File not found: ${rest}`);
        return reply.type('image/png').header('Cache-Control', 'private, max-age=86400').send(png);
      }
      let abs: string;
      try {
        abs = await deps.files.absolutePath(rel);
      } catch {
        throw new RpcError(404, `File not found: ${rest}`);
      }
      const st = await stat(abs);
      const name = abs.slice(abs.lastIndexOf('/') + 1);
      reply.header('Content-Length', String(st.size)).header('Cache-Control', 'private, max-age=0')
        .header('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name)}`)
        .type(/\.(gcode|gco|g|log|cfg|txt)$/i.test(name) ? 'text/plain' : 'application/octet-stream');
      return reply.send(fileStream(abs));
    });
    scope.delete('/server/files/*', { config: { access: 'public' } }, async (request, reply) => {
      const rest = (request.params as { '*': string })['*'];
      return answer(request, reply, 'server.files.delete_file', { path: rest });
    });

    // Upload: multipart with `file` and optional `root`, `path`, `print`, `checksum` (the file part may come first).
    await scope.register(async (up) => {
      if (up.hasContentTypeParser('multipart/form-data')) up.removeContentTypeParser('multipart/form-data');
      await up.register(multipart, { limits: { fileSize: deps.config.current.server.uploads.maxSize, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 40 } });
      up.post('/server/files/upload', { config: { access: 'public' } }, async (request, reply) => {
        const ctx = ctxOf(request);
        if (!service.auth.authenticated(ctx.caller)) throw unauthorized();
        const id = ctx.caller.identity;
        if (!id.has('FILES_UPLOAD')) throw forbiddenRpc();
        if (!request.isMultipart()) throw new RpcError(400, 'No file to upload');
        const fields = new Map<string, string>();
        let sink: UploadSink | undefined;
        let partFilename: string | undefined;
        try {
          for await (const part of request.parts()) {
            if (part.type === 'file') {
              if (part.fieldname !== 'file' || sink) {
                part.file.resume();
                continue;
              }
              sink = await deps.files.newUploadSink();
              partFilename = part.filename;
              for await (const chunk of part.file) await sink.write(chunk as Buffer);
              if (part.file.truncated) throw new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, 'Upload exceeds the maximum upload size');
            } else if (typeof part.value === 'string') {
              fields.set(part.fieldname, part.value);
            }
          }
        } catch (err) {
          await sink?.discard();
          if (err instanceof DomainError || err instanceof RpcError) throw err;
          throw new RpcError(400, `Upload failed: ${(err as Error).message}`);
        }
        if (!sink) throw new RpcError(400, 'No file to upload');
        const root = fields.get('root') ?? GCODES;
        if (root !== GCODES) {
          await sink.discard();
          throw new RpcError(400, `Invalid root request: ${root}`);
        }
        const folder = trimSlashes(fields.get('path') ?? '');
        const print = (fields.get('print') ?? '').toLowerCase() === 'true';
        const form = { sink, partFilename, fields: new Map<string, string>([['path', folder], ...(print ? [['print', 'true'] as [string, string]] : [])]) };
        const outcome = await acceptUpload({ files: deps.files, jobs: deps.jobs, logger: deps.logger }, 'local', form,
          { user: id.name, mayOverwrite: id.has('FILES_DELETE') || id.has('FILES_UPLOAD'), maySelect: id.has('FILES_SELECT') || id.has('PRINT'), mayPrint: id.has('PRINT') });
        if (outcome.kind !== 'file') throw new RpcError(400, 'No file to upload');
        const item = itemOf(outcome.stored);
        return reply.code(201).header('Location', `${prefix}/server/files/${GCODES}/${item.path.split('/').map(encodeURIComponent).join('/')}`)
          .send({ item, print_started: outcome.effectivePrint, print_queued: false, action: 'create_file' });
      });
    });
  }, { prefix });
}

