// Error catalogue: stable codes for every failure a service reports to its callers. Services throw DomainError;
// only src/http/error-mapper.ts decides the HTTP status. Retired codes are never reused.

export const ErrorCodes = {
  /** The request is malformed or a value is out of range. */
  INVALID_REQUEST: 'INVALID_REQUEST',
  /** The caller lacks the permission or is not logged in. */
  FORBIDDEN: 'FORBIDDEN',
  /** The thing named does not exist. */
  NOT_FOUND: 'NOT_FOUND',
  /** The printer or job is in a state that does not allow this. */
  CONFLICT: 'CONFLICT',
  PRINTER_NOT_OPERATIONAL: 'PRINTER_NOT_OPERATIONAL',
  PRINTER_BUSY: 'PRINTER_BUSY',
  FILE_IN_USE: 'FILE_IN_USE',
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  UNSUPPORTED_MEDIA: 'UNSUPPORTED_MEDIA',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  TOO_MANY_REQUESTS: 'TOO_MANY_REQUESTS',
  /** Something failed inside the host (a command exited non-zero, disk error...). */
  INTERNAL: 'INTERNAL',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class DomainError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DomainError';
    this.code = code;
  }
}

export const invalid = (message: string): DomainError => new DomainError(ErrorCodes.INVALID_REQUEST, message);
export const notFound = (message: string): DomainError => new DomainError(ErrorCodes.NOT_FOUND, message);
export const conflict = (message: string): DomainError => new DomainError(ErrorCodes.CONFLICT, message);
export const forbidden = (message: string): DomainError => new DomainError(ErrorCodes.FORBIDDEN, message);
export const notOperational = (): DomainError =>
  new DomainError(ErrorCodes.PRINTER_NOT_OPERATIONAL, 'Printer is not operational');

/** What a failed write says of the disk: full (or over quota), or read-only (a worn SD card remounted so). */
export type StorageProblem = 'full' | 'read-only';

/** The errno codes (`ENOSPC`, …) of `err` and of the errors that caused it, nearest first. */
function* errnoCodes(err: unknown): Generator<string> {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string') yield code;
  }
}

/** Whether `err` or one of its causes is the system error `code`. */
export function hasErrno(err: unknown, code: string): boolean {
  for (const c of errnoCodes(err)) if (c === code) return true;
  return false;
}

/** The storage problem behind `err` or one of its causes, if that is what it is. */
export function storageProblem(err: unknown): StorageProblem | undefined {
  for (const code of errnoCodes(err)) {
    if (code === 'ENOSPC' || code === 'EDQUOT') return 'full';
    if (code === 'EROFS') return 'read-only';
  }
  return undefined;
}
