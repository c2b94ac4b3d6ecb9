// Moonraker's error vocabulary: the JSON-RPC codes and the HTTP-style statuses its methods answer with, and the one
// mapping from Gantry's DomainError codes to them (docs/reference/moonraker.md §1.2).
import { DomainError, ErrorCodes, storageProblem } from '../core/errors.ts';

/** An error a Moonraker method answers with: `code` is a JSON-RPC code (-326xx) or an HTTP status. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
    this.name = 'RpcError';
  }
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

export const unauthorized = (): RpcError => new RpcError(401, 'Unauthorized');
export const forbiddenRpc = (): RpcError => new RpcError(403, 'Forbidden');
export const badParam = (message: string): RpcError => new RpcError(400, message);

/** The HTTP status for an error a method threw. */
export function httpStatusOf(err: unknown): number {
  if (err instanceof RpcError) {
    if (err.code === METHOD_NOT_FOUND) return 404;
    if (err.code === INVALID_PARAMS || err.code === INVALID_REQUEST || err.code === PARSE_ERROR) return 400;
    return err.code >= 400 && err.code < 600 ? err.code : 500;
  }
  if (err instanceof DomainError) {
    switch (err.code) {
      case ErrorCodes.INVALID_REQUEST: return 400;
      case ErrorCodes.FORBIDDEN: return 403;
      case ErrorCodes.NOT_FOUND: return 404;
      case ErrorCodes.CONFLICT: case ErrorCodes.PRINTER_BUSY: case ErrorCodes.FILE_IN_USE: case ErrorCodes.ALREADY_EXISTS: return 409;
      // Klipper's answer in its shutdown/error state ("Printer is not ready"): Gantry itself, Moonraker's Klippy, is up.
      case ErrorCodes.PRINTER_NOT_OPERATIONAL: return 400;
      case ErrorCodes.UNSUPPORTED_MEDIA: return 415;
      case ErrorCodes.PAYLOAD_TOO_LARGE: return 413;
      case ErrorCodes.TOO_MANY_REQUESTS: return 429;
      default: return 500;
    }
  }
  if (storageProblem(err)) return 507;
  return 500;
}

/**
 * The JSON-RPC `error` member: Moonraker turns an internal 404 into -32601 and a 401 into -32602 "Unauthorized",
 * every other failure keeps its HTTP-style status as the code.
 */
export function rpcErrorOf(err: unknown): { code: number; message: string } {
  if (err instanceof RpcError && err.code < 0) return { code: err.code, message: err.message };
  const status = httpStatusOf(err);
  const message = err instanceof RpcError || err instanceof DomainError ? err.message : status === 507 ? 'Not enough space on the disk' : 'Internal Server Error';
  if (status === 404) return { code: METHOD_NOT_FOUND, message };
  if (status === 401) return { code: INVALID_PARAMS, message: 'Unauthorized' };
  return { code: status, message };
}
