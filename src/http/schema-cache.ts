// Request validators compiled once per process and shared by every Fastify app built in it (tests build hundreds).
import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type RouteSchema = { schema: unknown; httpPart?: string; method?: string; url?: string };
type Compile = (route: RouteSchema) => unknown;
type Factory = (externalSchemas: unknown, options: unknown) => Compile;

// Fastify's default factory, kept at module level: one Ajv per (external schemas, options) for the whole process.
// Made on the first compile: the build loads Ajv only then (scripts/build.mjs, lazyAjv).
let pool: Factory | undefined;
const compiled = new Map<string, unknown>();

/**
 * Compiling the route table's schemas costs about half a second of CPU per app; an identical schema (same JSON, same
 * external schemas and Ajv options) gets the validator already compiled. Validators keep no state between calls.
 */
const buildValidator: Factory = (externalSchemas, options) => {
  const compile = (pool ??= AjvCompiler() as unknown as Factory)(externalSchemas, options);
  const prefix = JSON.stringify(externalSchemas) + JSON.stringify(options);
  return (route) => {
    const key = `${prefix}${route.httpPart}${JSON.stringify(route.schema)}`;
    let fn = compiled.get(key);
    if (!fn) {
      fn = compile(route);
      compiled.set(key, fn);
    }
    return fn;
  };
};

export const cachedValidatorFactory = buildValidator as unknown as CompilersFactory['buildValidator'];
