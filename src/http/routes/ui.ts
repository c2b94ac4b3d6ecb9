// Browser entry points: `/` (control panel) and `/login` serve the built UI (web/dist) and set the CSRF cookie that
// cookie-authenticated API calls need; the UI's assets are served under /static/.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GantryApp } from '../types.ts';
import { PACKAGE_ROOT } from '../../core/package-root.ts';
import { issueCsrfCookie } from '../auth.ts';
import { externalPrefix } from '../urls.ts';
import { FileBytes, HtmlText } from '../../octoprint/schema-kit.ts';

/** Where `npm run build:web` puts the UI; overridable for tests of the "not built" page. */
export const WEB_DIST = fileURLToPath(new URL('web/dist/', PACKAGE_ROOT));

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Gantry: web interface not built</title></head><body style="font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em">
<h1>The web interface has not been built</h1>
<p>Gantry is running and its API works, but the browser interface is missing (<code>web/dist</code>).</p>
<p>Build it with <code>npm run build:web</code> (it also runs as part of <code>npm ci</code> and <code>npm start</code>), then reload this page.</p>
</body></html>`;

const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The built page names its assets relative to itself (`./assets/…`, Vite's base './'); they are served under
 * `<prefix>/static/`, and the UI's API calls need the prefix a reverse proxy mounts Gantry under (X-Script-Name),
 * so both are written into the page here. Varies with the request's headers, so the page is never cached shared.
 */
function withBase(html: string, prefix: string): string {
  const base = escapeAttr(prefix);
  return html
    .replace(/(\s(?:src|href)=")\.\//g, `$1${base}/static/`)
    .replace(/<head>/i, `<head>\n<meta name="gantry-base" content="${base}">`);
}

export function registerUiRoutes(app: GantryApp, _deps: object, distDir: string = WEB_DIST): void {
  // Files are looked up per request (wildcard), so a build made while the server runs is picked up on reload.
  if (!existsSync(distDir)) app.log.warn({ distDir }, 'web UI not built yet: run `npm run build:web`');
  // In its own scope with its own not-found answer: a missing asset is a plain 404 (the app-wide handler would see
  // the GET /static/* route and answer 405).
  void app.register(async (scope) => {
    scope.setNotFoundHandler((_request, reply) =>
      reply.code(404).type('text/html; charset=utf-8').send('<html><title>404: Not Found</title><body>404: Not Found</body></html>'));
    await scope.register(fastifyStatic, {
      root: distDir,
      prefix: '/',
      index: false,
      wildcard: true,
      decorateReply: false,
      suppressWarning: true,
      cacheControl: false,
      // web/build.ts writes .br and .gz copies of text assets; sent as they are when the browser accepts them.
      preCompressed: true,
      // Hashed file names under assets/ never change content, so browsers may keep them; everything else revalidates.
      setHeaders: (reply, path) => {
        reply.header('Cache-Control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  }, { prefix: '/static' });

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    issueCsrfCookie(request, reply);
    let html: string;
    try {
      html = await readFile(`${distDir}/index.html`, 'utf8');
    } catch {
      return reply.code(503).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
    }
    // The page names the current asset hashes, so it must not be cached across builds.
    return reply.header('Cache-Control', 'no-cache').type('text/html; charset=utf-8').send(withBase(html, externalPrefix(request)));
  };

  // The same page serves both: the app decides by path (the appkeys dialog redirects to `/login/` with a slash).
  for (const url of ['/', '/login', '/login/']) {
    app.get(url, { config: { access: 'public' }, schema: { response: { 200: HtmlText, 503: HtmlText } } }, page);
  }

  // Browsers ask for /favicon.ico unasked; the icon is an SVG (web/favicon.svg, copied into web/dist by the build).
  app.get('/favicon.ico', { config: { access: 'public' }, schema: { response: { 200: FileBytes, 404: HtmlText } } }, async (_request, reply) => {
    let svg: Buffer;
    try {
      svg = await readFile(`${distDir}/favicon.svg`);
    } catch {
      return reply.code(404).type('text/html; charset=utf-8').send('<html><title>404: Not Found</title><body>404: Not Found</body></html>');
    }
    return reply.header('Cache-Control', 'public, max-age=86400').type('image/svg+xml').send(svg);
  });
}
