// POST /api/settings/apikey: regenerates the global API key (the only way to change it; settings cannot set it).
import type { GantryApp } from '../types.ts';
import type { AccessService } from '../../access/access-service.ts';

export function registerSettingsApiKeyRoutes(app: GantryApp, deps: { access: AccessService }): void {
  app.post('/api/settings/apikey', { config: { access: 'ADMIN' } }, async () => ({ apikey: await deps.access.regenerateGlobalKey() }));
}
