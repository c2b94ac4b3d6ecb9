// /api/version and /api/server: who we are, in the words slicers check (text must begin with "OctoPrint").
import type { GantryApp } from '../types.ts';

/** The OctoPrint release whose API we match. */
export const OCTOPRINT_COMPAT_VERSION = '1.9.3';
export const API_VERSION = '0.1';

export function registerVersionRoutes(app: GantryApp, deps: { version: string }): void {
  app.get('/api/version', { config: { access: 'STATUS' } }, async () => ({
    api: API_VERSION,
    server: OCTOPRINT_COMPAT_VERSION,
    text: `OctoPrint ${OCTOPRINT_COMPAT_VERSION} (Gantry ${deps.version})`,
  }));

  app.get('/api/server', { config: { access: 'STATUS' } }, async () => ({
    version: OCTOPRINT_COMPAT_VERSION,
    safemode: null,
  }));
}
