// Malformed multipart bodies (no, empty or wrong boundary, truncated parts) read through @fastify/multipart are a 400.
import { DomainError, invalid } from '../core/errors.ts';

/**
 * Runs `read` and turns the multipart parser's errors into INVALID_REQUEST; domain errors and system errors (a full disk
 * while saving a part) pass through. Busboy throws plain Errors without codes for bad input, so anything code-less counts.
 */
export async function readingMultipart<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const e = err as { code?: string; statusCode?: number; message?: string };
    if (typeof e.statusCode === 'number' && e.statusCode < 500) throw err;
    if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) throw err;
    throw invalid(`Malformed multipart body: ${e.message ?? 'unreadable'}`);
  }
}
