// Shared parsing for OctoPrint-style `{"command": ..., ...}` bodies: exact error texts for unknown commands and
// missing or invalid parameters.
import { Type } from 'typebox';
import { invalid } from '../../core/errors.ts';

/** Any JSON object; the command routes check fields themselves to answer with OctoPrint's messages. */
export const CommandBody = Type.Object({}, { additionalProperties: true });

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

