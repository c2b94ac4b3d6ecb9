// Building blocks for the response schemas: nullable scalars as JSON-schema type lists and open values.
import { Type } from '../config/typebox.ts';
import type { TSchema, TUnsafe } from 'typebox';

type Scalar = { string: string; number: number; boolean: boolean };

/**
 * A scalar or null, as `{"type": [t, "null"]}`: fast-json-stringify writes it directly, where a union would make it
 * try each branch with a validator. Numbers stay `number` (never `integer`, which would truncate a fraction).
 */
export const Nullable = <K extends keyof Scalar>(type: K): TUnsafe<Scalar[K] | null> => Type.Unsafe<Scalar[K] | null>({ type: [type, 'null'] });

/** Any JSON value, written as JSON.stringify writes it (open shapes: plugin data, analysis, settings sections). */
export const AnyJson: TUnsafe<unknown> = Type.Unsafe<unknown>({});

/** An object whose listed keys have these types and which may carry any other key as it is. */
export const OpenObject = <P extends Record<string, TSchema>>(properties: P) => Type.Object(properties, { additionalProperties: true });

/**
 * No body (204, 302, 304): Fastify serialises nothing; declared so every route states what it answers. Some routes send
 * an empty string with a content type, as OctoPrint's do.
 */
export const NoContent = Type.Unsafe<void | ''>({ description: 'No Content' });

/** A text/html answer (OctoPrint's plain error pages and redirects): sent as it is, never serialised. */
export const HtmlText = Type.String({ description: 'text/html' });

/** A file's bytes (downloads, zip bundles): streamed as they are, never serialised. */
export const FileBytes = Type.Unsafe<unknown>({ description: 'the file, streamed' });
