// /api/plugin/notifications: the notifier's targets (URLs masked), its recent deliveries, and a test message
// (Gantry addition, src/notifications/; the targets themselves are settings, plugins.notifications).
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { NotificationService } from '../../notifications/notification-service.ts';
import { OpenObject } from '../../octoprint/schema-kit.ts';
import { notFound } from '../../core/errors.ts';

const TestBody = Type.Object({
  command: Type.Literal('test'),
  target: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
}, { additionalProperties: false });

const Status = OpenObject({ apprise: Type.Boolean(), targets: Type.Array(OpenObject({})), recent: Type.Array(OpenObject({})) });
const TestReply = Type.Object({ results: Type.Array(OpenObject({ target: Type.Integer(), ok: Type.Boolean() })) });

export function registerNotificationRoutes(app: GantryApp, deps: { notifications: NotificationService }): void {
  const { notifications } = deps;
  app.get('/api/plugin/notifications', { config: { access: 'SETTINGS' }, schema: { response: { 200: Status } } },
    async () => notifications.status());
  app.post('/api/plugin/notifications', { config: { access: 'SETTINGS' }, schema: { body: TestBody, response: { 200: TestReply } } },
    async (request) => {
      const { target } = request.body;
      const results = await notifications.test(target);
      if (target !== undefined && results.length === 0) throw notFound(`No notification target ${target}`);
      return { results };
    });
}
