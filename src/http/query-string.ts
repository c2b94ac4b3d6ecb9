// Query strings as OctoPrint's Flask reads them (`request.values.get`): a name given twice keeps its first value.
import { parse } from 'node:querystring';

/** Fastify's own parser makes an array of a repeated name, which every route's schema (strings) refused with 400. */
export function firstQueryValues(query: string): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(parse(query))) out[name] = Array.isArray(value) ? value[0] : value ?? '';
  return out;
}
