// POST /api/util/test: the admin's connectivity and file-system checks; 200 whenever the test could run, 400 for bad parameters.
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import { runUtilTest } from '../../system/util-tests.ts';
import { OpenObject } from '../../octoprint/schema-kit.ts';

const TestBody = Type.Object({ command: Type.Optional(Type.String()) }, { additionalProperties: true });

/** Each test answers its own fields (result, and what it checked). */
const TestResult = OpenObject({});

export function registerUtilRoutes(app: GantryApp): void {
  app.post('/api/util/test', { config: { access: 'ADMIN' }, schema: { body: TestBody, response: { 200: TestResult } } }, async (request) => {
    const { command, ...params } = request.body;
    return runUtilTest(command ?? '', params, request.ip);
  });
}
