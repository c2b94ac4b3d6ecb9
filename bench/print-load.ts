// The API and push load a benchmarked print runs under, each in a process of its own (this file, forked), so the load's own work is not counted against the server: 100 pollers, or issue 18's 200 push clients plus wrk.
// Env (read here): BENCH_POLL_MS (pause between a poller's requests), BENCH_PUSH_CLIENTS (200), BENCH_WRK_CONNS (64),
// BENCH_LOAD_NICE (the load runs at that nice level).
import { fork, spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Gantry } from '../src/main.ts';

export const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 1000);
export const POLLERS = 100;
/** Issue 18's load: push clients connected and wrk connections on GET /api/printer while printing. */
export const PUSH_CLIENTS = Number(process.env.BENCH_PUSH_CLIENTS ?? 200);
export const WRK_CONNS = Number(process.env.BENCH_WRK_CONNS ?? 64);
export const LOAD_NICE = process.env.BENCH_LOAD_NICE ? Number(process.env.BENCH_LOAD_NICE) : null;

// ------------------------------------------------------------------------------------------------ HTTP load (child)

function pollers(url: string, key: string, count: number, pauseMs: number): void {
  const agent = new Agent({ keepAlive: true, maxSockets: count });
  let requests = 0;
  let errors = 0;
  let stop = false;
  const one = (): void => {
    if (stop) return;
    const req = request(`${url}/api/printer`, { agent, headers: { 'X-Api-Key': key } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200 || res.statusCode === 409) requests++;
        else errors++;
        setTimeout(one, pauseMs);
      });
    });
    req.on('error', () => { errors++; setTimeout(one, pauseMs); });
    req.end();
  };
  for (let i = 0; i < count; i++) one();
  const ready = setInterval(() => {
    if (requests + errors >= count) {
      clearInterval(ready);
      process.send!({ ready: true });
    }
  }, 20);
  process.on('message', () => {
    stop = true;
    process.send!({ requests, errors }, () => process.exit(0));
  });
}

export async function withPollers<T>(g: Gantry, fn: () => Promise<T>): Promise<{ result: T; requests: number; errors: number; seconds: number }> {
  const child = fork(fileURLToPath(import.meta.url), ['pollers', g.url, g.config.current.api.key ?? '', String(POLLERS), String(POLL_MS)], { execArgv: ['--import', 'tsx'] });
  await new Promise((r) => child.once('message', r));
  const t0 = performance.now();
  const result = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const stats = await new Promise<{ requests: number; errors: number }>((resolve) => {
    child.once('message', (m) => resolve(m as { requests: number; errors: number }));
    child.send('stop');
  });
  return { result, ...stats, seconds };
}

// ---------------------------------------------------------------------------- issue 18's load: push clients + wrk (child)

/**
 * 200 push clients (each logs in passively and authenticates its websocket, like FDM Monster) plus wrk hammering
 * GET /api/printer over 64 connections, for as long as the parent wants; answers {ready} then, on 'stop', wrk's
 * figures. Runs in its own process so the load's own work is not counted against the server's event loop.
 */
async function pushAndWrk(url: string, key: string, clients: number, conns: number): Promise<void> {
  const { default: WebSocket } = await import('ws');
  const sockets: InstanceType<typeof WebSocket>[] = [];
  let messages = 0;
  const connect = async (): Promise<void> => {
    const login = await fetch(`${url}/api/login`, { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, body: '{"passive":true}' });
    const session = (await login.json()) as { name: string; session: string };
    const ws = new WebSocket(`${url.replace('http', 'ws')}/sockjs/websocket`);
    await new Promise<void>((resolve, reject) => {
      ws.on('open', () => { ws.send(JSON.stringify({ auth: `${session.name}:${session.session}` })); resolve(); });
      ws.on('error', reject);
    });
    ws.on('message', () => { messages++; });
    sockets.push(ws);
  };
  // 20 at a time: one by one took minutes on a busy machine.
  for (let i = 0; i < clients; i += 20) await Promise.all(Array.from({ length: Math.min(20, clients - i) }, connect));
  const wrkArgs = ['-t1', `-c${conns}`, '-d600s', '-H', `X-Api-Key: ${key}`, `${url}/api/printer`];
  const wrk = LOAD_NICE !== null ? spawn('nice', ['-n', String(LOAD_NICE), 'wrk', ...wrkArgs], { stdio: ['ignore', 'pipe', 'ignore'] })
    : spawn('wrk', wrkArgs, { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  wrk.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  await new Promise((r) => setTimeout(r, 1000)); // wrk connected and the loop saturated before the print starts
  process.send!({ ready: true });
  process.on('message', () => {
    wrk.once('exit', () => {
      for (const ws of sockets) ws.close();
      const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
      const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
      process.send!({ requests, errors: non2xx, messages }, () => process.exit(0));
    });
    wrk.kill('SIGINT'); // wrk prints its summary on SIGINT
  });
}

export async function withPushAndWrk<T>(g: Gantry, fn: () => Promise<T>): Promise<{ result: T; requests: number; errors: number; seconds: number; messages: number }> {
  const child = fork(fileURLToPath(import.meta.url), ['push-wrk', g.url, g.config.current.api.key ?? '', String(PUSH_CLIENTS), String(WRK_CONNS)], { execArgv: ['--import', 'tsx'] });
  if (LOAD_NICE !== null && child.pid !== undefined) setPriority(child.pid, LOAD_NICE);
  await new Promise((r) => child.once('message', r));
  const t0 = performance.now();
  const result = await fn();
  const seconds = (performance.now() - t0) / 1000;
  const stats = await new Promise<{ requests: number; errors: number; messages: number }>((resolve) => {
    child.once('message', (m) => resolve(m as { requests: number; errors: number; messages: number }));
    child.send('stop');
  });
  return { result, ...stats, seconds };
}

if (process.argv[2] === 'push-wrk') await pushAndWrk(process.argv[3], process.argv[4], Number(process.argv[5]), Number(process.argv[6]));
else if (process.argv[2] === 'pollers') pollers(process.argv[3], process.argv[4], Number(process.argv[5]), Number(process.argv[6]));
