// Shared parsing for OctoPrint-style `{"command": ..., ...}` bodies: exact error texts for unknown commands and
// missing or invalid parameters.
import { Type } from '../../config/typebox.ts';
import type { TProperties, TUnsafe } from 'typebox';
import { invalid } from '../../core/errors.ts';

/** Any JSON object; the command routes check fields themselves to answer with OctoPrint's messages. */
export const CommandBody = Type.Object({}, { additionalProperties: true });

/**
 * The body schema of a command route: one branch per command (its parameters and their types), chosen by `command`
 * (JSON Schema if/then, so a wrong value is reported for the command that was sent, not for every branch). A body
 * naming no known command, or missing a parameter, passes the schema: the route answers those in OctoPrint's words
 * (`commandOf`) after its own state checks, as OctoPrint orders them. `common`: parameters typed whatever the command
 * (`command` itself among them on the routes where a non-string command was always a schema error).
 */
export function commandUnion<T = Body>(branches: Record<string, TProperties>, common?: TProperties): TUnsafe<T> {
  return Type.Unsafe<T>({
    type: 'object',
    ...(common ? { properties: Type.Object(common).properties } : {}),
    allOf: Object.entries(branches).map(([command, properties]) => ({
      if: { required: ['command'], properties: { command: { const: command } } },
      then: Type.Object({ command: Type.Literal(command), ...properties }, { additionalProperties: true }),
    })),
  });
}

/** A parameter the route checks itself (any JSON value passes the schema). */
export const Param = Type.Optional(Type.Unknown());

export type Body = Record<string, unknown>;

export function commandOf<T extends string>(body: unknown, valid: readonly T[], required: Partial<Record<T, string[]>> = {}): { command: T; body: Body } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('Expected content-type JSON');
  const b = body as Body;
  const command = b.command;
  if (typeof command !== 'string' || !(valid as readonly string[]).includes(command)) throw invalid('command is invalid');
  for (const key of required[command as T] ?? []) if (!Object.hasOwn(b, key)) throw invalid('Mandatory parameters missing');
  return { command: command as T, body: b };
}

export const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

