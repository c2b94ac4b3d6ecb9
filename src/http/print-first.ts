// The print comes first: while a print streams and the event loop is saturated, read-only API requests are shed with 503 + Retry-After.
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GantryApp } from './types.ts';

export interface PrintFirstOptions {
  /** Whether shedding may happen at all: a print runs and its link shares this event loop. */
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

export interface LoopReading {
  /** Whether the loop is being sampled now (only while `printing()` holds and requests come in). */
  sampling: boolean;
  /** Mean delay over the last complete sample, ms beyond the histogram's resolution; Infinity if the loop never turned. */
  delayMs: number;
  /** Utilisation over the last complete sample, 0–1. */
  utilization: number;
}

/** The histogram's timer period, ms: its own wake-ups are part of what it measures, so not finer. */
const RESOLUTION_MS = 10;

/**
 * Samples the event loop (mean delay and utilisation per interval) while shedding is possible, and not at all
 * otherwise: a loop-delay histogram wakes the process every 10 ms, which an idle server on a small board should not
 * pay all day (≈ 100 wake-ups a second when @fastify/under-pressure sampled from start). Utilisation is judged per
 * interval: averaged since the process started, a loop saturated after hours idle would never count.
 */
export class LoopPressure {
  private histogram: IntervalHistogram | null = null;
  private elu: EventLoopUtilization | null = null;
  private timer: NodeJS.Timeout | null = null;
  private delayMs = 0;
  private utilization = 0;

  constructor(
    private readonly active: () => boolean,
    private readonly intervalMs: number,
    private readonly limits: { delayMs: number; utilization: number },
  ) {}

  /** Starts sampling unless it runs already (called while shedding is possible); the first reading comes one interval later. */
  wake(): void {
    if (this.timer) return;
    this.histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    this.histogram.enable();
    this.elu = performance.eventLoopUtilization();
    this.timer = setTimeout(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  get sampling(): boolean { return this.timer !== null; }

  get saturated(): boolean {
    return this.timer !== null && (this.delayMs > this.limits.delayMs || this.utilization > this.limits.utilization);
  }

  reading(): LoopReading {
    return { sampling: this.sampling, delayMs: this.delayMs, utilization: this.utilization };
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.histogram?.disable();
    this.timer = null;
    this.histogram = null;
    this.elu = null;
    this.delayMs = 0;
    this.utilization = 0;
  }

  private sample(): void {
    if (!this.active()) { this.stop(); return; }
    const h = this.histogram!;
    // No sample in the whole interval: the loop never turned, the most saturated it can be.
    this.delayMs = h.count === 0 ? Infinity : Math.max(0, h.mean / 1e6 - RESOLUTION_MS);
    h.reset();
    const now = performance.eventLoopUtilization();
    this.utilization = performance.eventLoopUtilization(now, this.elu!).utilization;
    this.elu = now;
    this.timer!.refresh();
  }
}

/**
 * With the printer link on the main thread, every firmware reply is handled on the same event loop as HTTP and push
 * work; with 64 connections polling /api/printer the replies queue behind requests and the printer's planner starves
 * (issue 18 measured 0.56 of the unloaded rate). While a print runs, a status GET wakes the sampler; while the loop
 * is saturated, GET/HEAD requests under /api/ beyond `budgetPerSecond` answer 503 with Retry-After at once (before
 * auth, routing work or JSON building). Commands (POST: pause, cancel, M112 through /api/printer/command), the web UI's
 * files and push sockets are never shed. Once the loop has room again, requests are answered as before; once the
 * print ends, sampling stops.
 */
export function registerPrintFirst(app: GantryApp, opts: PrintFirstOptions): LoopPressure {
  const retryAfter = String(opts.retryAfterSeconds ?? 1);
  const budget = opts.budgetPerSecond ?? 50;
  const pressure = new LoopPressure(opts.printing, opts.sampleIntervalMs ?? 200, {
    delayMs: opts.maxEventLoopDelayMs ?? 20, utilization: opts.maxEventLoopUtilization ?? 0.9,
  });
  let windowStart = -Infinity;
  let answered = 0;
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || !request.url.startsWith('/api/')) { done(); return; }
    // Asked only while it can change the answer: a flood of polls on a loop with room costs no printer state lookups.
    if (!pressure.sampling) { if (opts.printing()) pressure.wake(); done(); return; }
    if (!pressure.saturated || !opts.printing()) { done(); return; }
    // A fast print can saturate the loop by itself; a few polls a second still get their answer, a flood does not.
    const now = performance.now(); // a jump of the wall clock must not stop the budget renewing
    if (now - windowStart >= 1000) { windowStart = now; answered = 0; }
    if (answered < budget) { answered++; done(); return; }
    void reply.code(503).header('Retry-After', retryAfter)
      .send({ error: 'Busy printing: status requests are shed while the printer needs the server; retry shortly' });
  });
  app.addHook('onClose', (_app, done) => { pressure.stop(); done(); });
  return pressure;
}
