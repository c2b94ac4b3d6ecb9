// /api/slicing: slicers and their profiles in OctoPrint's wire shape, plus native profile import for PrusaSlicer.
import { Type } from '../../config/typebox.ts';
import type { Static } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { GantryApp } from '../types.ts';
import type { SlicingService, ProfileInfo } from '../../slicing/slicing-service.ts';
import { absoluteUrl } from '../urls.ts';
import { invalid } from '../../core/errors.ts';
import { truthy } from '../../core/values.ts';
import { readingMultipart } from '../multipart-errors.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';

const SlicerParams = Type.Object({ slicer: Type.String({ minLength: 1, maxLength: 100 }) });
const ProfileParams = Type.Object({ slicer: Type.String({ minLength: 1, maxLength: 100 }), key: Type.String({ minLength: 1, maxLength: 100 }) });
const ProfileBody = Type.Object({
  displayName: Type.Optional(Type.String({ maxLength: 200 })),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  data: Type.Optional(Type.Record(Type.String({ pattern: '^[a-z0-9_]+$' }), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null(),
    Type.Array(Type.Union([Type.String(), Type.Number()]))]))),
  default: Type.Optional(Type.Boolean()),
  // Echoed back by clients from earlier responses; ignored.
  key: Type.Optional(Type.String()),
  resource: Type.Optional(Type.String()),
});

const ProfileEntry = Type.Object({
  key: Type.String(), displayName: Type.String(), description: Type.String(), default: Type.Boolean(), resource: Type.String(),
});
const ProfileEntries = Type.Object({}, { additionalProperties: ProfileEntry });
/** Per slicer key: what it is, whether it can run, and its profiles by key. */
const SlicersReply = Type.Object({}, {
  additionalProperties: Type.Object({
    key: Type.String(), displayName: Type.String(), default: Type.Boolean(), configured: Type.Boolean(), sameDevice: Type.Boolean(),
    extensions: Type.Object({ source: Type.Array(Type.String()), destination: Type.Array(Type.String()) }),
    profiles: ProfileEntries,
  }),
});
/** A profile with its settings (the slicer's own keys and values). */
const FullProfileReply = Type.Object({ ...ProfileEntry.properties, data: Type.Object({}, { additionalProperties: true }) });
const AbridgedProfile = Type.Object({ displayName: Type.String(), description: Type.String(), resource: Type.String() });

const profileUrl = (request: FastifyRequest, slicer: string, key: string) =>
  absoluteUrl(request, `/api/slicing/${encodeURIComponent(slicer)}/profiles/${encodeURIComponent(key)}`);

function profileEntry(request: FastifyRequest, slicer: string, p: ProfileInfo) {
  return { key: p.key, displayName: p.displayName, description: p.description, default: p.default, resource: profileUrl(request, slicer, p.key) };
}

const abridged = (request: FastifyRequest, slicer: string, p: ProfileInfo) =>
  ({ displayName: p.displayName, description: p.description, resource: profileUrl(request, slicer, p.key) });

export function registerSlicingRoutes(app: GantryApp, deps: { slicing: SlicingService }): void {
  const { slicing } = deps;

  app.get('/api/slicing', { config: { access: 'SLICE' }, schema: { response: { 200: SlicersReply } } }, async (request) => {
    const out: Record<string, unknown> = {};
    for (const s of await slicing.listSlicers()) {
      out[s.key] = {
        key: s.key,
        displayName: s.displayName,
        default: s.default,
        configured: s.configured,
        sameDevice: s.sameDevice,
        extensions: { source: s.sourceExtensions, destination: [s.destinationExtension] },
        profiles: Object.fromEntries(s.profiles.map((p) => [p.key, profileEntry(request, s.key, p)])),
      };
    }
    return out as Static<typeof SlicersReply>;
  });

  app.get('/api/slicing/:slicer/profiles', { config: { access: 'SLICE' }, schema: { params: SlicerParams, response: { 200: ProfileEntries } } }, async (request) => {
    const { slicer } = request.params;
    const profiles = await slicing.listProfiles(slicer);
    return Object.fromEntries(profiles.map((p) => [p.key, profileEntry(request, slicer, p)]));
  });

  app.get('/api/slicing/:slicer/profiles/:key', { config: { access: 'SLICE' },
    schema: { params: ProfileParams, response: { 200: FullProfileReply } } }, async (request) => {
    const { slicer, key } = request.params;
    const p = await slicing.getProfile(slicer, key);
    return { ...profileEntry(request, slicer, p), data: p.data };
  });

  app.put('/api/slicing/:slicer/profiles/:key', { config: { access: 'SETTINGS' },
    schema: { params: ProfileParams, body: ProfileBody, response: { 201: AbridgedProfile } } },
    async (request, reply) => {
      const { slicer, key } = request.params;
      const p = await slicing.saveProfile(slicer, key, request.body);
      return reply.code(201).header('Location', profileUrl(request, slicer, key)).send(abridged(request, slicer, p));
    });

  app.patch('/api/slicing/:slicer/profiles/:key', { config: { access: 'SETTINGS' },
    schema: { params: ProfileParams, body: ProfileBody, response: { 200: AbridgedProfile } } },
    async (request) => {
      const { slicer, key } = request.params;
      const p = await slicing.updateProfile(slicer, key, request.body);
      return abridged(request, slicer, p);
    });

  app.delete('/api/slicing/:slicer/profiles/:key', { config: { access: 'SETTINGS' },
    schema: { params: ProfileParams, response: { 204: NoContent } } }, async (request, reply) => {
    const { slicer, key } = request.params;
    await slicing.deleteProfile(slicer, key);
    return reply.code(204).send();
  });

  // Native profile import (PrusaSlicer .ini exported from the desktop app), like OctoPrint's slicer plugins offer.
  app.post('/plugin/prusaslicer/import', { config: { access: 'SETTINGS' }, schema: { response: { 201: ProfileEntry } } }, async (request, reply) => {
    if (!request.isMultipart()) throw invalid('Expected multipart/form-data with a "file" field');
    const fields: Record<string, string> = {};
    let text: string | undefined;
    let fileName = '';
    await readingMultipart(async () => {
      for await (const part of request.parts({ limits: { fileSize: 1024 * 1024, files: 1, fields: 10 } })) {
        if (part.type === 'file') {
          if (part.fieldname !== 'file') {
            part.file.resume();
            continue;
          }
          fileName = part.filename;
          const buf = await part.toBuffer();
          if (part.file.truncated) throw invalid('Profile file too large');
          text = buf.toString('utf8');
        } else {
          fields[part.fieldname] = String(part.value);
        }
      }
    });
    if (text === undefined) throw invalid('No file included');
    const key = (fields.name || fileName.replace(/\.ini$/i, '')).replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[._-]+/, '');
    if (!key) throw invalid('No profile name given');
    const p = await slicing.importNative('prusaslicer', key, text, {
      displayName: fields.displayName || key, description: fields.description, default: truthy(fields.default),
    });
    return reply.code(201).header('Location', profileUrl(request, 'prusaslicer', key)).send(profileEntry(request, 'prusaslicer', p));
  });
}
