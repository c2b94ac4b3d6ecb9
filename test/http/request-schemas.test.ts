// Request schemas: the server's Ajv skips checking schemas against JSON Schema's meta-schema, so this test does it for every route.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { channel } from 'node:diagnostics_channel';
import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifyInstance } from 'fastify';
import { startTestServer } from '../helpers/server.ts';

interface MetaChecker { validateSchema(schema: unknown): boolean | Promise<unknown>; errorsText(errors?: unknown): string; errors?: unknown }

const PARTS = ['body', 'querystring', 'params', 'headers'] as const;

test('every request schema is valid JSON Schema, and compiles with the server\'s Ajv options', async (t) => {
  const schemas: { route: string; part: string; schema: unknown }[] = [];
  const onInit = (message: unknown) => {
    (message as { fastify: FastifyInstance }).fastify.addHook('onRoute', (route) => {
      const s = route.schema as Record<string, unknown> | undefined;
      for (const part of PARTS) if (s?.[part]) schemas.push({ route: `${[route.method].flat().join(',')} ${route.url}`, part, schema: s[part] });
    });
  };
  channel('fastify.initialization').subscribe(onInit);
  try {
    await startTestServer(t);
  } finally {
    channel('fastify.initialization').unsubscribe(onInit);
  }
  assert.ok(schemas.length > 60, `only ${schemas.length} request schemas seen`);

  // Fastify's own Ajv factory with its default options (meta-schema checks on), reached through its onCreate hook.
  let ajv: MetaChecker | undefined;
  const compile = (AjvCompiler() as unknown as (ext: object, o: object) => (r: { schema: unknown }) => unknown)(
    {}, { customOptions: {}, onCreate: (a: MetaChecker) => { ajv = a; } });
  assert.ok(ajv);
  const checker = ajv;
  // The check can fail: a schema with a keyword of the wrong shape is refused.
  assert.equal(checker.validateSchema({ type: 'string', minLength: 'three' }), false);

  const invalid: string[] = [];
  for (const { route, part, schema } of schemas) {
    if (checker.validateSchema(schema) !== true) invalid.push(`${route} ${part}: ${checker.errorsText(checker.errors)}`);
    else {
      try {
        compile({ schema });
      } catch (err) {
        invalid.push(`${route} ${part}: ${(err as Error).message}`);
      }
    }
  }
  assert.deepEqual(invalid, []);
});
