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
  pool ??= AjvCompiler() as unknown as Factory;
  const compile = pool(externalSchemas, options);
  // Bodies are JSON, typed by the client: nothing is coerced. Fastify's default (`coerceTypes: 'array'`, for query
  // strings and URL parameters, which are all text) took `{"command": ["resume"]}` as "resume" and resumed a print.
  const bodyOptions = { ...(options as object), customOptions: { ...(options as { customOptions?: object }).customOptions, coerceTypes: false } };
  let compileBody: Compile | undefined;
  const prefix = JSON.stringify(externalSchemas) + JSON.stringify(options);
  return (route) => {
    const key = `${prefix}${route.httpPart}${JSON.stringify(route.schema)}`;
    let fn = compiled.get(key);
    if (!fn) {
      fn = route.httpPart === 'body' ? (compileBody ??= pool!(externalSchemas, bodyOptions))(route) : compile(route);
      compiled.set(key, fn);
    }
    return fn;
  };
};

export const cachedValidatorFactory = buildValidator as unknown as CompilersFactory['buildValidator'];
