// Shared HTTP adapter types: the Fastify instance type every route file receives, and per-route options.
import type { FastifyInstance, RawServerDefault, FastifyBaseLogger } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Identity } from '../access/identity.ts';
import type { LoopPressure } from './print-first.ts';

export type GantryApp = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * What a route requires. Every route declares it in `config.access` (checked at start-up):
 * - a permission key (or several: all needed), e.g. 'STATUS'
 * - 'public': anyone, even with an invalid API key (login, /apps/auth, appkeys probe)
 * - 'anonymous': anyone with no or a valid key (logout, currentuser, permissions list)
 * - 'user': any logged-in (non-guest) caller
 */
export type RouteAccess = string | string[] | 'public' | 'anonymous' | 'user';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** Skip the CSRF check (appkeys request, which apps call without a browser). */
    csrfExempt?: boolean;
  }
  interface FastifyRequest {
    identity: Identity;
    /** How the identity was established: header credentials ('apikey', 'basic') never need CSRF. */
    authVia: 'apikey' | 'basic' | 'session' | 'none';
    /** An API key was sent and not recognised. */
    invalidApiKey: boolean;
  }
  interface FastifyInstance {
    /** The event-loop sampler behind print-first shedding (src/http/print-first.ts); absent without a printer. */
    loopPressure?: LoopPressure;
  }
}
