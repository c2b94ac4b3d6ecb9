// /apps/auth: the deprecated app session key handshake (temporary key → RSA-SHA1 signed → verified key).
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { AccessService } from '../../access/access-service.ts';

const VerifyBody = Type.Object({
  appid: Type.String(),
  appversion: Type.String(),
  key: Type.String(),
  _sig: Type.String(),
}, { additionalProperties: true });

const TemporaryKey = Type.Object({ unverifiedKey: Type.String(), validUntil: Type.Number() });
const VerifiedKey = Type.Object({ key: Type.String(), validUntil: Type.Number() });

/** Validity on the wire is a Unix timestamp in seconds with a fraction. */
const seconds = (ms: number) => ms / 1000;

export function registerAppsAuthRoutes(app: GantryApp, deps: { access: AccessService }): void {
  const sessions = deps.access.appSessions;

  app.get('/apps/auth', { config: { access: 'public' }, schema: { response: { 200: TemporaryKey } } }, async (request) => {
    const t = sessions.createTemporary(request.ip);
    return { unverifiedKey: t.key, validUntil: seconds(t.validUntil) };
  });

  // Apps post without a browser, so there is no CSRF cookie to double-submit.
  app.post('/apps/auth', { config: { access: 'public', csrfExempt: true }, schema: { body: VerifyBody, response: { 200: VerifiedKey } } }, async (request) => {
    const { appid, appversion, key, _sig } = request.body;
    const v = sessions.verify(appid, appversion, key, _sig);
    return { key: v.key, validUntil: seconds(v.validUntil) };
  });
}
