// The one place that turns errors into HTTP answers: domain codes to statuses, every body `{"error": "..."}`.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCodes, hasErrno, storageProblem, type ErrorCode } from '../core/errors.ts';

const STATUS: Record<ErrorCode, number> = {
  [ErrorCodes.INVALID_REQUEST]: 400,
  [ErrorCodes.FORBIDDEN]: 403,
  [ErrorCodes.NOT_FOUND]: 404,
  [ErrorCodes.CONFLICT]: 409,
  [ErrorCodes.PRINTER_NOT_OPERATIONAL]: 409,
  [ErrorCodes.PRINTER_BUSY]: 409,
  [ErrorCodes.FILE_IN_USE]: 409,
  [ErrorCodes.ALREADY_EXISTS]: 409,
  [ErrorCodes.UNSUPPORTED_MEDIA]: 415,
  [ErrorCodes.PAYLOAD_TOO_LARGE]: 413,
  [ErrorCodes.TOO_MANY_REQUESTS]: 429,
  [ErrorCodes.INTERNAL]: 500,
};

export const GENERIC_MESSAGES: Record<number, string> = {
  400: 'The browser (or proxy) sent a request that this server could not understand.',
  403: "You don't have the permission to access the requested resource. It is either read-protected or not readable by the server.",
  404: 'The requested URL was not found on the server. If you entered the URL manually please check your spelling and try again.',
  405: 'The method is not allowed for the requested URL.',
  409: 'A conflict happened while processing the request. The resource might have been modified while the request was being processed.',
  413: 'The data value transmitted exceeds the capacity limit.',
  414: 'The URL is too long.',
  415: 'The server does not support the media type transmitted in the request.',
  507: 'The server could not store what the request asked for.',
  500: 'The server encountered an internal error and was unable to complete your request. Either the server is overloaded or there is an error in the application.',
};

export function statusOf(code: ErrorCode): number {
  return STATUS[code];
}

export function sendError(reply: FastifyReply, status: number, message?: string): FastifyReply {
  return reply.code(status).type('application/json').send({ error: message ?? GENERIC_MESSAGES[status] ?? 'Error' });
}

/** A failure to write because the disk is full or read-only: 507, saying so, instead of an unexplained 500. */
function storageAnswer(err: Error, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  if (err instanceof DomainError && err.code !== ErrorCodes.INTERNAL) return undefined;
  const problem = storageProblem(err);
  if (!problem) return undefined;
  request.log.error({ err }, problem === 'full' ? 'disk full' : 'storage read-only');
  const why = problem === 'full' ? 'not enough free disk space' : 'the storage is read-only';
  return sendError(reply, 507, err instanceof DomainError ? `${err.message}: ${why}` : `Nothing was saved: ${why}`);
}

export function errorHandler(err: FastifyError | DomainError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const storage = storageAnswer(err, request, reply);
  if (storage) return storage;
  if (err instanceof DomainError) {
    const status = STATUS[err.code];
    if (status >= 500) request.log.error({ err }, 'internal error');
    return sendError(reply, status, err.message);
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    const where = fe.validationContext ?? 'request';
    const first = fe.validation[0];
    const field = first?.instancePath ? first.instancePath.replace(/^\//, '').replace(/\//g, '.') : '';
    const msg = first ? `Invalid ${where}${field ? ` field ${field}` : ''}: ${first.message ?? 'invalid'}` : fe.message;
    return sendError(reply, 400, msg);
  }
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || (err instanceof SyntaxError && status === 400)) {
    return sendError(reply, 400, 'Malformed JSON body in request');
  }
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return sendError(reply, 400, GENERIC_MESSAGES[400]);
  if (fe.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(reply, 414, 'A name in the URL is too long (at most 255 bytes)');
  if (fe.code === 'FST_ERR_BAD_URL') return sendError(reply, 400, 'The URL is not valid (bad percent-encoding)');
  // A name the client chose that the file system cannot hold (over 255 bytes with what is added to it on disk).
  if (hasErrno(err, 'ENAMETOOLONG')) return sendError(reply, 400, 'A name is too long for the file system');
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, 413, 'Request body too large');
  if (status >= 400 && status < 500) return sendError(reply, status, status === 429 ? fe.message : (fe.message || GENERIC_MESSAGES[status]));
  request.log.error({ err }, 'unhandled error');
  return sendError(reply, 500);
}
