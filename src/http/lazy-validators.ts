// Request validators compiled on a route's first use instead of at start: Fastify's default Ajv compiler, deferred.
import { cachedValidatorFactory } from './schema-cache.ts';
import type { FastifyServerOptions } from 'fastify';

type ValidatorFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator'];
type Validator = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Build = (externalSchemas: unknown, options: unknown) => (route: unknown) => Validator;

/**
 * Fastify compiles every route's schemas with Ajv when the app gets ready: about a third of the start-up CPU
 * (150+ routes) and compiled code for routes a printer never sees. The same compiler with the same options,
 * run on a route's first request. Fastify reads a failed check's `.errors` from the function it was given, so
 * they are copied over. A schema Ajv cannot compile now fails that route's first request (500) instead of the
 * start; the route tests compile every schema.
 */
export function lazyValidators(): ValidatorFactory {
  const factory = cachedValidatorFactory as unknown as Build;
  const lazy: Build = (externalSchemas, options) => {
    // The Ajv instance too (its meta-schemas, formats): made by the first validation, not by the start.
    let build: ((route: unknown) => Validator) | undefined;
    return (route) => {
      let compiled: Validator | undefined;
      const validate: Validator = (data, context) => {
        compiled ??= (build ??= factory(externalSchemas, options))(route);
        const ok = compiled(data, context);
        validate.errors = compiled.errors;
        return ok;
      };
      // Fastify passes the request as parent data (so Ajv may replace a coerced root value) only to a function
      // that has Ajv's `schemaEnv`; every function here ends in an Ajv one.
      validate.schemaEnv = {};
      return validate;
    };
  };
  return lazy as unknown as ValidatorFactory;
}
