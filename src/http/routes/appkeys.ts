// Application keys workflow: /plugin/appkeys/{probe,request,auth,decision} and key management at /api/plugin/appkeys.
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { AccessService } from '../../access/access-service.ts';
import { GLOBAL_KEY_USER } from '../../access/access-service.ts';
import { forbidden, invalid, notFound } from '../../core/errors.ts';
import { GENERIC_MESSAGES, sendError } from '../error-mapper.ts';
import { absoluteUrl } from '../urls.ts';
import { commandUnion } from './command-body.ts';
import { issueCsrfCookie } from '../auth.ts';
import { HtmlText, NoContent, Nullable } from '../../octoprint/schema-kit.ts';

const RequestBody = Type.Object({
  app: Type.Optional(Type.String()),
  user: Type.Optional(Type.Union([Type.String(), Type.Null()])),
}, { additionalProperties: true });
const TokenParams = Type.Object({ token: Type.String() });
const DecisionBody = Type.Object({ decision: Type.Optional(Type.Boolean()) }, { additionalProperties: true });
const ListQuery = Type.Object({ all: Type.Optional(Type.String()) }, { additionalProperties: true });
const AppKeysCommand = commandUnion<{ command?: string; app?: string; user?: string; key?: string }>({ generate: { app: Type.Optional(Type.String()), user: Type.Optional(Type.String()) },
  revoke: { key: Type.Optional(Type.String()) } },
{ command: Type.Optional(Type.String()), app: Type.Optional(Type.String()), user: Type.Optional(Type.String()), key: Type.Optional(Type.String()) });

const KeyEntry = Type.Object({ app_id: Type.String(), api_key: Type.String(), user_id: Type.String() });
const KeyList = Type.Object({
  keys: Type.Array(KeyEntry),
  /** Requests awaiting this user's decision, by user token. */
  pending: Type.Object({}, { additionalProperties: Type.Object({ app_id: Type.String(), user_id: Nullable('string'), user_token: Type.String() }) }),
});

const GRANT = 'PLUGIN_APPKEYS_GRANT';
const ADMIN = 'PLUGIN_APPKEYS_ADMIN';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function registerAppKeyRoutes(app: GantryApp, deps: { access: AccessService }): void {
  const appKeys = deps.access.appKeys;
  const wireKey = (k: { appId: string; apiKey: string; userId: string }) => ({ app_id: k.appId, api_key: k.apiKey, user_id: k.userId });

  app.get('/plugin/appkeys/probe', { config: { access: 'public' }, schema: { response: { 204: NoContent } } }, async (_request, reply) => reply.code(204).type('text/plain').send());

  app.post('/plugin/appkeys/request', { config: { access: 'public', csrfExempt: true }, schema: { body: RequestBody,
    response: { 201: Type.Object({ app_token: Type.String(), auth_dialog: Type.String() }) } } }, async (request, reply) => {
    reply.header('Cache-Control', 'no-cache');
    const body = request.body;
    if (!body || typeof body.app !== 'string' || !body.app.trim()) return sendError(reply, 400, 'No app name provided');
    const r = appKeys.request(body.app, body.user ?? null, request.ip);
    const dialog = absoluteUrl(request, `/plugin/appkeys/auth/${r.appToken}`) + (r.userId ? `?user=${encodeURIComponent(r.userId)}` : '');
    return reply.code(201).header('Location', absoluteUrl(request, `/plugin/appkeys/request/${r.appToken}`))
      .send({ app_token: r.appToken, auth_dialog: dialog });
  });

  app.get('/plugin/appkeys/request/:token', { config: { access: 'public' },
    schema: { params: TokenParams, response: { 200: Type.Object({ api_key: Type.String() }), 202: Type.Object({ message: Type.String() }) } } }, async (request, reply) => {
    const result = await appKeys.poll(request.params.token);
    if (!result) return sendError(reply, 404);
    if (result.state === 'pending') return reply.code(202).send({ message: 'Awaiting decision' });
    return { api_key: result.apiKey };
  });

  // A minimal allow/deny page for apps that open `auth_dialog` in a browser.
  app.get('/plugin/appkeys/auth/:token', { config: { access: 'public' },
    schema: { params: TokenParams, response: { 200: HtmlText, 302: NoContent } } }, async (request, reply) => {
    const pending = appKeys.pendingRequest(request.params.token);
    if (!pending) return sendError(reply, 404);
    const id = request.identity;
    const back = encodeURIComponent(request.url);
    if (id.isAnonymous || !id.has(GRANT)) {
      const forUser = pending.userId ? `&user_id=${encodeURIComponent(pending.userId)}` : '';
      return reply.code(302).header('Location', `/login?redirect=${back}&permissions=${GRANT}${forUser}`).send();
    }
    if (pending.userId && pending.userId !== id.name) {
      return reply.code(302).header('Location', `/login?redirect=${back}&user_id=${encodeURIComponent(pending.userId)}`).send();
    }
    issueCsrfCookie(request, reply);
    const app = escapeHtml(pending.appId);
    const token = pending.userToken;
    return reply.type('text/html; charset=utf-8').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Access request</title></head><body>
<h1>Access request</h1><p><strong>${app}</strong> asks for access to this printer as <strong>${escapeHtml(id.name ?? '')}</strong>.</p>
<button id="allow">Allow</button> <button id="deny">Deny</button>
<script>
const csrf = (document.cookie.split('; ').find((c) => c.startsWith('csrf_token')) || '').split('=')[1] || '';
const decide = (decision) => fetch('/plugin/appkeys/decision/${token}', { method: 'POST', credentials: 'same-origin',
  headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf }, body: JSON.stringify({ decision }) })
  .then(() => { document.body.textContent = decision ? 'Access granted.' : 'Access denied.'; });
document.getElementById('allow').onclick = () => decide(true);
document.getElementById('deny').onclick = () => decide(false);
</script></body></html>`);
  });

  app.post('/plugin/appkeys/decision/:token', { config: { access: 'user' }, schema: { params: TokenParams, body: DecisionBody, response: { 204: NoContent } } },
    async (request, reply) => {
      reply.header('Cache-Control', 'no-cache');
      if (typeof request.body?.decision !== 'boolean') throw invalid('No decision provided');
      const id = request.identity;
      if (!id.has(GRANT)) throw forbidden('No permission to grant app access');
      appKeys.decide(request.params.token, id.name ?? GLOBAL_KEY_USER, request.body.decision);
      return reply.code(204).send();
    });

  app.get('/api/plugin/appkeys', { config: { access: 'user' }, schema: { querystring: ListQuery, response: { 200: KeyList } } }, async (request) => {
    const id = request.identity;
    const user = id.name ?? GLOBAL_KEY_USER;
    const all = request.query.all === 'true' && id.has(ADMIN);
    const pending: Record<string, { app_id: string; user_id: string | null; user_token: string }> = {};
    for (const p of appKeys.pendingFor(user)) pending[p.userToken] = { app_id: p.appId, user_id: p.userId, user_token: p.userToken };
    return { keys: appKeys.listKeys(all ? undefined : user).map(wireKey), pending };
  });

  app.post('/api/plugin/appkeys', { config: { access: 'user' }, schema: { body: AppKeysCommand, response: { 200: KeyEntry, 204: NoContent } } }, async (request, reply) => {
    const id = request.identity;
    const caller = id.name ?? GLOBAL_KEY_USER;
    const body = request.body;
    if (body.command === 'generate') {
      if (!body.app) throw invalid('Mandatory parameters missing');
      const user = body.user ?? caller;
      if (user !== caller && !id.has(ADMIN)) throw forbidden(GENERIC_MESSAGES[403]);
      if (user !== caller && user !== GLOBAL_KEY_USER && !deps.access.users.getUser(user)) throw notFound('Unknown user');
      const key = await appKeys.generate(user, body.app);
      return { user_id: key.userId, app_id: body.app, api_key: key.apiKey };
    }
    if (body.command === 'revoke') {
      if (!body.key) throw invalid('Mandatory parameters missing');
      await appKeys.revoke(body.key, caller, id.has(ADMIN));
      return reply.code(204).send();
    }
    throw invalid('command is invalid');
  });
}
