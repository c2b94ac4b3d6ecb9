// /api/version and /api/server: who we are, in the words slicers check (text must begin with "OctoPrint").
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import { API_VERSION, OCTOPRINT_COMPAT_VERSION } from '../../octoprint/version.ts';

const VersionReply = Type.Object({ api: Type.String(), server: Type.String(), text: Type.String() });
const ServerReply = Type.Object({ version: Type.String(), safemode: Type.Null() });

export function registerVersionRoutes(app: GantryApp, deps: { version: string }): void {
  const version = { api: API_VERSION, server: OCTOPRINT_COMPAT_VERSION, text: `OctoPrint ${OCTOPRINT_COMPAT_VERSION} (Gantry ${deps.version})` };
  app.get('/api/version', { config: { access: 'STATUS' }, schema: { response: { 200: VersionReply } } }, async () => version);

  app.get('/api/server', { config: { access: 'STATUS' }, schema: { response: { 200: ServerReply } } }, async () => ({
    version: OCTOPRINT_COMPAT_VERSION,
    safemode: null,
  }));
}
