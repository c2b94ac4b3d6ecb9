// Response serializers compiled on a route's first answer with a given status instead of at start: Fastify's default compiler, deferred.
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer'];
type Serialize = (data: unknown) => string;
type Build = (externalSchemas: unknown, options: unknown) => (route: unknown) => Serialize;

/**
 * Every route declares a response schema (#16), and Fastify compiles each one (fast-json-stringify) when the app gets
 * ready: 15–45 ms of every start for answers most routes never give. The same compiler, run on the first answer per
 * route and status; the route tests answer through every schema.
 */
export function lazySerializers(): SerializerFactory {
  const factory = (SerializerSelector as unknown as () => Build)();
  const lazy: Build = (externalSchemas, options) => {
    const build = factory(externalSchemas, options);
    return (route) => {
      let compiled: Serialize | undefined;
      return (data) => (compiled ??= build(route))(data);
    };
  };
  return lazy as unknown as SerializerFactory;
}
