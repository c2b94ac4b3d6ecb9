// Test helper: proves each response schema leaves the wire as the handler built it (nothing dropped, nothing coerced).
import { channel, tracingChannel } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/**
 * Fastify's serializer for a response schema (fast-json-stringify) drops properties the schema does not list and
 * coerces values to the declared type; without a schema the body is JSON.stringify's. For every JSON body a handler
 * sends on a route whose schema covers the status, the schema's serializer and JSON.stringify must give the same JSON
 * value. Bodies a route serialises itself (the file listings' ETag path sends a string) are parsed and checked the
 * same way, so the schema describes them truthfully too. Hooked through Fastify's diagnostics channel: no test build.
 */
export interface WireMismatch { route: string; status: number; expected: unknown; actual: unknown }

// Keyed by the app's HTTP server: a route registered inside a plugin scope answers through a child instance.
const mismatches = new WeakMap<object, WireMismatch[]>();
/** `METHOD url` of every route whose answer was checked against its schema, in this process. */
export const checkedRoutes = new Set<string>();
/** `METHOD url` of JSON answers sent by a route with no schema for that status, in this process. */
export const unschemaedRoutes = new Set<string>();

type Serializer = (v: unknown) => string;
interface Store { request: FastifyRequest; reply: FastifyReply; route: { url: string; method: string } }

function serializerFor(reply: FastifyReply, status: number): Serializer | undefined {
  for (const key of [status, `${String(status)[0]}xx`, 'default']) {
    const fn = reply.getSerializationFunction(key as never) as Serializer | undefined;
    if (fn) return fn;
  }
  return undefined;
}

function jsonValue(reply: FastifyReply, payload: unknown): { value: unknown } | undefined {
  if (payload === undefined || payload === null || payload instanceof Error) return undefined;
  if (typeof payload === 'string') {
    if (!/json/.test(String(reply.getHeader('content-type') ?? ''))) return undefined;
    try {
      return { value: JSON.parse(payload) };
    } catch {
      return undefined;
    }
  }
  if (typeof payload !== 'object') return { value: payload };
  // JSON a route built itself as bytes (the file listings).
  if (Buffer.isBuffer(payload) && /json/.test(String(reply.getHeader('content-type') ?? ''))) return jsonValue(reply, payload.toString('utf8'));
  const p = payload as { pipe?: unknown; getReader?: unknown; buffer?: unknown };
  if (typeof p.pipe === 'function' || typeof p.getReader === 'function' || p.buffer instanceof ArrayBuffer) return undefined;
  const type = reply.getHeader('content-type');
  if (type !== undefined && !/json/.test(String(type))) return undefined;
  return { value: payload };
}

function check(store: Store, payload: unknown): void {
  const { reply, route } = store;
  const found = jsonValue(reply, payload);
  if (!found) return;
  const name = `${route.method} ${route.url}`;
  const status = reply.statusCode;
  const serialize = serializerFor(reply, status);
  if (!serialize) {
    if (status < 400) unschemaedRoutes.add(name);
    return;
  }
  const expected: unknown = JSON.parse(JSON.stringify(found.value) ?? 'null');
  let actual: unknown;
  try {
    actual = JSON.parse(serialize(found.value));
  } catch (err) {
    actual = `serializer threw: ${(err as Error).message}`;
  }
  checkedRoutes.add(name);
  if (isDeepStrictEqual(actual, expected)) return;
  const key = reply.server.server;
  const list = mismatches.get(key) ?? [];
  list.push({ route: name, status, expected, actual });
  mismatches.set(key, list);
}

// The route table per app (keyed like the mismatches): `METHOD url` → the statuses its response schema covers.
const routeTables = new WeakMap<object, Map<string, string[]>>();

let installed = false;

/** Starts checking every answer of every app in this process (idempotent). */
export function installWireCheck(): void {
  if (installed) return;
  installed = true;
  // Fastify announces each new instance before any route exists: its onRoute hook sees the whole table.
  channel('fastify.initialization').subscribe((message) => {
    const app = (message as { fastify: FastifyInstance }).fastify;
    const table = new Map<string, string[]>();
    routeTables.set(app.server, table);
    app.addHook('onRoute', (route) => {
      const response = (route.schema as { response?: Record<string, unknown> } | undefined)?.response;
      for (const method of [route.method].flat()) {
        if (method !== 'HEAD') table.set(`${method} ${route.url}`, Object.keys(response ?? {}));
      }
    });
  });
  tracingChannel<unknown, Store>('fastify.request.handler').subscribe({
    start(store) {
      const reply = store.reply;
      const send = reply.send;
      let seen = false;
      // The first body the route sends is the handler's; a later one is the error handler's answer to a failure.
      reply.send = function (this: FastifyReply, payload?: unknown) {
        if (!seen && !(payload instanceof Error)) {
          seen = true;
          check(store, payload);
        }
        return send.call(this, payload);
      } as FastifyReply['send'];
    },
    end() {},
    asyncStart() {},
    asyncEnd() {},
    error() {},
  });
}

/** Every route of the app (HEAD aside) with the statuses its response schema declares (empty: no schema). */
export function routeTable(app: FastifyInstance): Map<string, string[]> {
  return routeTables.get(app.server) ?? new Map();
}

/** Mismatches found so far on this app's answers. */
export function wireMismatches(app: FastifyInstance): WireMismatch[] {
  return mismatches.get(app.server) ?? [];
}

// WIRE_CHECK_REPORT=<file>: each test process appends the routes it checked and the JSON routes with no schema.
const reportFile = process.env.WIRE_CHECK_REPORT;
if (reportFile) {
  process.on('exit', () => {
    const lines = [...[...checkedRoutes].map((r) => `checked ${r}`), ...[...unschemaedRoutes].map((r) => `unschemaed ${r}`)];
    if (lines.length) appendFileSync(reportFile, lines.join('\n') + '\n');
  });
}
