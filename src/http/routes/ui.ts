// Browser entry points: `/` and `/login` pages. They set the CSRF cookie that cookie-authenticated API calls need.
import type { GantryApp } from '../types.ts';
import { issueCsrfCookie } from '../auth.ts';

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title></head><body>${body}</body></html>`;

export function registerUiRoutes(app: GantryApp, _deps: object): void {
  app.get('/', async (request, reply) => {
    issueCsrfCookie(request, reply);
    return reply.type('text/html; charset=utf-8').send(page('Gantry', '<h1>Gantry</h1><p>The web interface is not built yet. <a href="/login">Log in</a></p>'));
  });
  app.get('/login', async (request, reply) => {
    issueCsrfCookie(request, reply);
    return reply.type('text/html; charset=utf-8').send(page('Gantry login', `<h1>Log in</h1>
<form id="login"><input name="user" placeholder="User" autocomplete="username"><input name="pass" type="password" placeholder="Password" autocomplete="current-password">
<label><input name="remember" type="checkbox"> Remember me</label><button>Log in</button></form>`));
  });
}
