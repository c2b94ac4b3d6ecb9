// POST /api/settings/apikey: regenerates the global API key (the only way to change it; settings cannot set it).
import type { GantryApp } from '../types.ts';
import type { AccessService } from '../../access/access-service.ts';
import { Type } from '../../config/typebox.ts';

export function registerSettingsApiKeyRoutes(app: GantryApp, deps: { access: AccessService }): void {
  app.post('/api/settings/apikey', { config: { access: 'ADMIN' }, schema: { response: { 200: Type.Object({ apikey: Type.String() }) } } }, async () => ({ apikey: await deps.access.regenerateGlobalKey() }));
}
