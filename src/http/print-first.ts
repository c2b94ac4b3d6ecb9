// The print comes first: while a print streams and the event loop is saturated, read-only API requests are shed with 503 + Retry-After.
import underPressure from '@fastify/under-pressure';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GantryApp } from './types.ts';

export interface PrintFirstOptions {
  /** Whether a print is running (the only time API load is shed). */
  printing: () => boolean;
  /** Mean event-loop delay (ms, over one sample interval) above which the loop counts as saturated. */
  maxEventLoopDelayMs?: number;
  /** Event-loop utilisation (0–1, over one sample interval) above which the loop counts as saturated. */
  maxEventLoopUtilization?: number;
  sampleIntervalMs?: number;
  retryAfterSeconds?: number;
  /** Status requests per second still answered while shedding, so a dashboard or the UI's polls keep working. */
  budgetPerSecond?: number;
}

/**
 * Every firmware reply is handled on the same event loop as HTTP and push work; with 64 connections polling
 * /api/printer the replies queue behind requests and the printer's planner starves (issue 18 measured 0.56 of the
 * unloaded rate). Under-pressure samples the loop (delay and utilisation) every `sampleIntervalMs`; while it is
 * saturated and a print runs, GET/HEAD requests under /api/ beyond `budgetPerSecond` answer 503 with Retry-After at once (before auth,
 * routing work or JSON building). Commands (POST: pause, cancel, M112 through /api/printer/command), the web UI's
 * files and push sockets are never shed. Once the loop has room again, requests are answered as before.
 */
export async function registerPrintFirst(app: GantryApp, opts: PrintFirstOptions): Promise<void> {
  const retryAfter = String(opts.retryAfterSeconds ?? 1);
  const budget = opts.budgetPerSecond ?? 50;
  let windowStart = 0;
  let answered = 0;
  await app.register(underPressure, {
    sampleInterval: opts.sampleIntervalMs ?? 200,
    maxEventLoopDelay: opts.maxEventLoopDelayMs ?? 20,
    maxEventLoopUtilization: opts.maxEventLoopUtilization ?? 0.9,
    // Its default averages utilisation since the process started: after hours idle a saturated loop would never count.
    eventLoopUtilizationMode: 'interval',
    pressureHandler: shed as unknown as (request: FastifyRequest, reply: FastifyReply) => void,
  });
  // Under-pressure sends what the handler returns and goes on with the request when it returns nothing (its types
  // say void, its code takes a body).
  function shed(request: FastifyRequest, reply: FastifyReply): { error: string } | undefined {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !request.url.startsWith('/api/') || !opts.printing()) return undefined;
    // A fast print can saturate the loop by itself; a few polls a second still get their answer, a flood does not.
    const now = Date.now();
    if (now - windowStart >= 1000) { windowStart = now; answered = 0; }
    if (answered < budget) { answered++; return undefined; }
    reply.code(503).header('Retry-After', retryAfter);
    return { error: 'Busy printing: status requests are shed while the printer needs the server; retry shortly' };
  }
}
