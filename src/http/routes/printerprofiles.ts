// /api/printerprofiles: list, get, add, patch, delete printer profiles in OctoPrint's wire shape (absolute `resource` URLs, ETag).
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { PrinterProfiles } from '../../printer/profiles/printer-profiles.ts';
import type { PrinterProfile } from '../../printer/profiles/printer-profile-shape.ts';
import { invalid } from '../../core/errors.ts';
import { STORED_JSON_BOUNDS, assertBoundedJson } from '../../core/bounded-json.ts';
import { sendError } from '../error-mapper.ts';
import { externalBase } from '../urls.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';
import { PrinterProfileListSchema, PrinterProfileReplySchema, PrinterProfileSchema } from '../../octoprint/printer-profile.ts';

const IdParams = Type.Object({ id: Type.String() });
const ProfileBody = Type.Object({
  profile: Type.Optional(Type.Unknown()),
  basedOn: Type.Optional(Type.Unknown()),
}, { additionalProperties: true });

import { isPlain, type Plain } from '../../core/plain.ts';
import { etagMatches } from '../conditional.ts';

/** Keys clients echo back from responses; they are derived, never stored. */
const DERIVED = ['resource', 'default', 'current'];

function withoutDerived(p: Plain): Plain {
  const out = { ...p };
  for (const k of DERIVED) delete out[k];
  return out;
}

export function registerPrinterProfileRoutes(app: GantryApp, deps: { printerProfiles: PrinterProfiles }): void {
  const profiles = deps.printerProfiles;

  const toWire = (request: FastifyRequest, p: PrinterProfile) => {
    const currentId = profiles.selectedId ?? profiles.defaultId;
    return {
      ...p,
      resource: `${externalBase(request)}/api/printerprofiles/${encodeURIComponent(p.id)}`,
      default: p.id === profiles.defaultId,
      current: p.id === currentId,
    };
  };

  app.get('/api/printerprofiles', {
    config: { access: 'CONNECTION' },
    // The listing is serialised here (once, for the ETag and the body); the schema says what that writes.
    schema: { querystring: Type.Object({ force: Type.Optional(Type.String()) }, { additionalProperties: true }),
      response: { 200: PrinterProfileListSchema, 304: NoContent } },
  }, async (request, reply) => {
    const body = { profiles: Object.fromEntries(profiles.list().map((p) => [p.id, toWire(request, p)])) };
    const json = JSON.stringify(body);
    const etag = `"${createHash('sha1').update(json).digest('hex')}"`;
    reply.header('ETag', etag);
    reply.header('Last-Modified', new Date(profiles.lastModified).toUTCString());
    const force = ['true', 'yes', '1'].includes((request.query.force ?? '').toLowerCase());
    if (!force && etagMatches(request.headers['if-none-match'], etag)) {
      return reply.code(304).send();
    }
    return (reply as FastifyReply).type('application/json').send(json);
  });

  app.get('/api/printerprofiles/:id', {
    config: { access: 'CONNECTION' },
    schema: { params: IdParams, response: { 200: PrinterProfileSchema } },
  }, async (request, reply) => {
    const p = profiles.get(request.params.id);
    if (!p) return sendError(reply, 404);
    return toWire(request, p);
  });

  app.post('/api/printerprofiles', {
    config: { access: 'SETTINGS' },
    schema: { body: ProfileBody, response: { 200: PrinterProfileReplySchema } },
  }, async (request) => {
    const { profile, basedOn } = request.body;
    if (profile === undefined || profile === null) throw invalid('profile is missing');
    if (!isPlain(profile)) throw invalid('profile is invalid');
    assertBoundedJson(profile, STORED_JSON_BOUNDS, 'profile');
    const makeDefault = profile.default === true;
    const patch = withoutDerived(profile);
    if (patch.id === undefined) throw invalid('profile.id is missing');
    if (patch.name === undefined) throw invalid('profile.name is missing');
    if (typeof patch.id !== 'string') throw invalid('profile is invalid');
    const saved = await profiles.add(patch, { basedOn: typeof basedOn === 'string' ? basedOn : undefined, makeDefault });
    return { profile: toWire(request, saved) };
  });

  app.patch('/api/printerprofiles/:id', {
    config: { access: 'SETTINGS' },
    schema: { params: IdParams, body: ProfileBody, response: { 200: PrinterProfileReplySchema } },
  }, async (request) => {
    const { profile } = request.body;
    if (profile === undefined || profile === null) throw invalid('profile missing');
    if (!isPlain(profile)) throw invalid('profile is invalid');
    assertBoundedJson(profile, STORED_JSON_BOUNDS, 'profile');
    const makeDefault = profile.default === true;
    // OctoPrint merges a patch for an unknown id into the default profile (observed on 1.9.3); clients rely on 200.
    const target = profiles.exists(request.params.id) ? request.params.id : profiles.defaultId;
    const patch = withoutDerived(profile);
    delete patch.id;
    const saved = await profiles.update(target, patch, { makeDefault });
    return { profile: toWire(request, saved) };
  });

  app.delete('/api/printerprofiles/:id', {
    config: { access: 'SETTINGS' },
    schema: { params: IdParams, response: { 204: NoContent } },
  }, async (request, reply) => {
    await profiles.remove(request.params.id);
    return reply.code(204).send();
  });
}
