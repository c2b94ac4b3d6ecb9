// Serving a Mainsail or Fluidd release from the folder `moonraker.ui` names (never shipped with Gantry): its files at
// /mainsail/ or /fluidd/ (or at / instead of Gantry's own UI), and its config.json made to point at this host.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { readFile, stat } from 'node:fs/promises';
import { join, normalize, sep } from 'node:path';
import { fileStream } from '../core/file-chunks.ts';

export type UiKind = 'mainsail' | 'fluidd';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8', js: 'text/javascript; charset=utf-8', mjs: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8',
  json: 'application/json', webmanifest: 'application/manifest+json', png: 'image/png', svg: 'image/svg+xml', ico: 'image/x-icon',
  woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', jpg: 'image/jpeg', gif: 'image/gif', txt: 'text/plain; charset=utf-8', map: 'application/json',
  wasm: 'application/wasm',
};

/** Which UI a release folder holds (its release_info.json, else its index.html's title). */
export async function uiKind(folder: string): Promise<UiKind | undefined> {
  try {
    const info = JSON.parse(await readFile(join(folder, 'release_info.json'), 'utf8')) as { project_name?: string };
    if (info.project_name === 'mainsail' || info.project_name === 'fluidd') return info.project_name;
  } catch {
    // no release_info.json: look at the page
  }
  try {
    const html = (await readFile(join(folder, 'index.html'), 'utf8')).toLowerCase();
    if (html.includes('<title>mainsail')) return 'mainsail';
    if (html.includes('<title>fluidd')) return 'fluidd';
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Where the UI is served. Mainsail's release loads its code from /assets/… (built for the site's root), so `auto`
 * serves it at `/`; Fluidd's release uses relative paths and lives at /fluidd/.
 */
export function mountOf(kind: UiKind, uiPath: string): string {
  if (uiPath !== 'auto') return uiPath;
  return kind === 'mainsail' ? '/' : '/fluidd/';
}

/** The release's config.json with the API on this host (same origin: hostname/port/path null). */
async function configJson(folder: string, kind: UiKind): Promise<string> {
  let base: Record<string, unknown> = {};
  try {
    base = JSON.parse(await readFile(join(folder, 'config.json'), 'utf8')) as Record<string, unknown>;
  } catch {
    // none shipped
  }
  if (kind === 'mainsail') return JSON.stringify({ ...base, hostname: null, port: null, path: null, instancesDB: 'moonraker', instances: [] });
  return JSON.stringify({ ...base, endpoints: [], hostConfig: { ...(base.hostConfig as object | undefined), blacklist: [] } });
}

export interface ServedUi { kind: UiKind; mount: string; warning?: string }

/** Registers the UI's routes; at `/` it takes the root page and unknown paths from Gantry's UI (the SPA's routes). */
export async function registerUi(app: FastifyInstance, folder: string, uiPath: string): Promise<ServedUi | undefined> {
  const kind = await uiKind(folder);
  if (!kind) return undefined;
  const mount = mountOf(kind, uiPath);
  const root = normalize(folder);
  const config = await configJson(folder, kind);

  const serve = async (rel: string, reply: FastifyReply): Promise<FastifyReply> => {
    if (rel === 'config.json') return reply.type('application/json').header('Cache-Control', 'no-cache').send(config);
    const abs = normalize(join(root, rel));
    if (abs !== root && !abs.startsWith(root + sep)) return reply.code(404).send({ error: 'Not found' });
    let st;
    try {
      st = await stat(abs);
    } catch {
      st = undefined;
    }
    // The single-page app's own routes (/console, /files, …) get its page.
    if (!st || !st.isFile()) {
      if (/\.[a-z0-9]+$/i.test(rel) && !rel.endsWith('.html')) return reply.code(404).send({ error: 'Not found' });
      return reply.type(TYPES.html).header('Cache-Control', 'no-cache').send(await readFile(join(root, 'index.html')));
    }
    const ext = rel.slice(rel.lastIndexOf('.') + 1).toLowerCase();
    const hashed = rel.startsWith('assets/') || rel.startsWith('js/') || rel.startsWith('css/');
    return reply.type(TYPES[ext] ?? 'application/octet-stream').header('Content-Length', String(st.size))
      .header('Cache-Control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache').send(fileStream(abs));
  };

  if (mount === '/') {
    // Before routing: Gantry's own UI also answers `/`. The API, push and Moonraker paths go on as before.
    const own = /^\/(?:api|plugin|apps|downloads|sockjs|static|websocket|server|printer|machine|access|login)(?:[/?]|$)/;
    app.addHook('onRequest', (request, reply, done) => {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || own.test(request.url)) return done();
      const path = decodeURIComponent(request.url.split('?')[0]).replace(/^\/+/, '');
      serve(path === '' ? 'index.html' : path, reply).catch(done);
    });
  } else {
    const page = async (_r: unknown, reply: FastifyReply) => serve('index.html', reply);
    app.get(mount.replace(/\/$/, ''), { config: { access: 'public' } }, (_r, reply) => reply.redirect(mount));
    app.get(mount, { config: { access: 'public' } }, page);
    app.get(`${mount}*`, { config: { access: 'public' } }, async (request, reply) => serve((request.params as { '*': string })['*'], reply));
  }
  const warning = kind === 'mainsail' && mount !== '/' ? `Mainsail's release loads its code from /assets/…: served at ${mount} it will not start (use uiPath auto or /)` : undefined;
  return { kind, mount, ...(warning ? { warning } : {}) };
}
