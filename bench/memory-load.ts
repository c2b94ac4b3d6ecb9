// Memory under load (`npm run bench -- memory-load`): a server in a child process (so client load is not counted) is driven
// by push clients that each log in and subscribe, plus keep-alive HTTP load and hostile requests; prints the server's
// RSS and V8 heap before, at peak and after the load ended (after a full GC), and what the access maps still hold.
// When wrk is installed it adds its own load (half GETs, half passive logins over MEM_CONNECTIONS connections).
// Env: MEM_CLIENTS (200), MEM_CONNECTIONS (64), MEM_SECONDS (30), MEM_ROUNDS (2), MEM_SETTLE (30 s idle before the last
// reading), MEM_WRK (1), MEM_SNAPSHOTS (a folder for before/after heap snapshots). Loopback only.
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request as httpRequest } from 'node:http';
import { writeHeapSnapshot, getHeapSpaceStatistics } from 'node:v8';
import WebSocket from 'ws';

interface Mem { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number; sessions?: number; spaces?: Record<string, number> }

if (process.argv[2] === 'server') {
  // Child: the server, answering memory questions over IPC (after a full GC when asked).
  const { startGantry } = await import('../src/main.ts');
  const g = await startGantry({ baseDir: process.argv[3], host: '127.0.0.1', port: 0 });
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (m: { ask: 'mem' | 'gc-mem' | 'stop'; snapshot?: string }) => {
    if (m.ask === 'stop') { void g.stop().then(() => process.exit(0)); return; }
    void (async () => {
      if (m.snapshot) writeHeapSnapshot(m.snapshot);
      // V8 sweeps concurrently after a collection: collect, let the sweeper finish, collect again, then read.
      if (m.ask === 'gc-mem' && gc) {
        gc();
        await new Promise((r) => setTimeout(r, 1000));
        gc();
      }
      report();
    })();
  });
  const report = () => {
    const u = process.memoryUsage();
    const sessions = (g.access.sessions as unknown as { sessions?: Map<unknown, unknown> }).sessions?.size;
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((sp) => [sp.space_name.replace(/_space$/, ''), Math.round(sp.space_used_size / 1e5) / 10]));
    process.send!({ mem: { rss: u.rss, heapUsed: u.heapUsed, heapTotal: u.heapTotal, external: u.external, arrayBuffers: u.arrayBuffers, sessions, spaces } });
  };
  process.send!({ ready: { url: g.url, key: g.config.current.api.key } });
} else {
  const CLIENTS = Number(process.env.MEM_CLIENTS ?? 200);
  const CONNECTIONS = Number(process.env.MEM_CONNECTIONS ?? 64);
  const SECONDS = Number(process.env.MEM_SECONDS ?? 30);
  const ROUNDS = Number(process.env.MEM_ROUNDS ?? 2);
  const base = await mkdtemp(join(tmpdir(), 'gantry-mem-'));
  // The V8 flags bin/gantry.js sets for a real server (GANTRY_V8_FLAGS, default --optimize-for-size), so the figures are
  // the installed server's; MEM_V8_FLAGS overrides them here (empty: V8's defaults).
  const v8Flags = (process.env.MEM_V8_FLAGS ?? process.env.GANTRY_V8_FLAGS ?? '--optimize-for-size').split(/\s+/).filter(Boolean);
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['server', base], { execArgv: ['--import', 'tsx', '--expose-gc', ...v8Flags], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  console.log(`server V8 flags: ${v8Flags.join(' ') || '(none)'}`);
  const next = <T>(key: string) => new Promise<T>((resolve) => {
    const on = (m: Record<string, unknown>) => { if (key in m) { child.off('message', on); resolve(m[key] as T); } };
    child.on('message', on);
  });
  const { url, key } = await next<{ url: string; key: string }>('ready');
  // MEM_SNAPSHOTS=dir writes before.heapsnapshot and after.heapsnapshot there (compare them in Chrome DevTools).
  const snapshots = process.env.MEM_SNAPSHOTS;
  const mem = async (gc: boolean, snapshot?: string) => {
    child.send({ ask: gc ? 'gc-mem' : 'mem', ...(snapshot && snapshots ? { snapshot: join(snapshots, `${snapshot}.heapsnapshot`) } : {}) });
    return next<Mem>('mem');
  };
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  const show = (label: string, m: Mem) => console.log(`${label.padEnd(22)} rss ${mb(m.rss).padStart(9)}  heapUsed ${mb(m.heapUsed).padStart(9)}  heapTotal ${mb(m.heapTotal).padStart(9)}  external ${mb(m.external).padStart(8)}  sessions ${m.sessions ?? '?'}`);

  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const call = (method: string, path: string, body?: string, headers: Record<string, string> = {}) => new Promise<number>((resolve) => {
    const u = new URL(url);
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, agent, headers: { 'X-Api-Key': key, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });

  const pushClients = async (n: number): Promise<WebSocket[]> => Promise.all(Array.from({ length: n }, async () => {
    // Like FDM Monster: each client logs in (a new session) and authenticates its socket with it.
    const u = new URL(url);
    const session = await new Promise<{ name: string; session: string }>((resolve, reject) => {
      const req = httpRequest({ host: u.hostname, port: u.port, method: 'POST', path: '/api/login', agent, headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString()) as { name: string; session: string }));
      });
      req.on('error', reject);
      req.end('{"passive":true}');
    });
    const ws = new WebSocket(`${url.replace('http', 'ws')}/sockjs/websocket`);
    await new Promise<void>((resolve, reject) => {
      ws.on('open', () => { ws.send(JSON.stringify({ auth: `${session.name}:${session.session}` })); resolve(); });
      ws.on('error', reject);
    });
    ws.on('message', () => {});
    return ws;
  }));

  const PATHS = ['/api/version', '/api/printer', '/api/job', '/api/files?recursive=true', '/api/settings', '/api/connection', '/api/currentuser',
    '/api/printerprofiles', '/api/access/users', '/api/system/commands', '/api/does-not-exist'];
  const HOSTILE: Array<[string, string, string]> = [['POST', '/api/files/local/x.gcode', '{"command":"__proto__"}'], ['POST', '/api/printer/tool', '{"command":"constructor"}'],
    ['POST', '/api/settings', '{"plugins":{"x":' + '{"a":'.repeat(40) + '1' + '}'.repeat(40) + '}}'], ['POST', '/api/login', '{"user":"nobody","pass":"x"}'],
    ['GET', '/apps/auth', ''], ['POST', '/api/printer/command', '{nope']];
  let requests = 0;
  const load = async (until: number) => {
    await Promise.all(Array.from({ length: CONNECTIONS }, async (_, w) => {
      for (let i = w; Date.now() < until; i++) {
        if (i % 8 === 0) {
          const [m, p, b] = HOSTILE[i % HOSTILE.length];
          await call(m, p, b || undefined);
        } else await call('GET', PATHS[i % PATHS.length]);
        requests++;
      }
    }));
  };

  await new Promise((r) => setTimeout(r, 2000));
  const before = await mem(true, 'before');
  show('before (after GC)', before);
  let peak = before;
  const sampler = setInterval(() => { void mem(false).then((m) => { if (m.rss > peak.rss) peak = m; }); }, 500);
  const hasWrk = process.env.MEM_WRK !== '0' && spawnSync('wrk', ['--version']).error === undefined;
  const loginLua = join(base, 'login.lua');
  await writeFile(loginLua, 'wrk.method = "POST"\nwrk.body = \'{"passive":true}\'\nwrk.headers["Content-Type"] = "application/json"\n');
  const wrk = (args: string[]) => new Promise<string>((resolve) => {
    const p = spawn('wrk', ['-t1', `-c${Math.max(1, CONNECTIONS >> 1)}`, `-d${SECONDS}s`, '-H', `X-Api-Key: ${key}`, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    p.on('exit', () => resolve(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? '?'));
  });
  for (let round = 1; round <= ROUNDS; round++) {
    const clients = await pushClients(CLIENTS);
    const wrks = hasWrk ? [wrk([`${url}/api/printer`]), wrk(['-s', loginLua, `${url}/api/login`])] : [];
    await load(Date.now() + SECONDS * 1000);
    if (hasWrk) console.log(`wrk round ${round}: GET /api/printer ${(await wrks[0])}/s, passive login ${(await wrks[1])}/s`);
    for (const c of clients) c.close();
    await new Promise((r) => setTimeout(r, 1000));
    show(`after round ${round}`, await mem(false));
  }
  clearInterval(sampler);
  agent.destroy();
  await new Promise((r) => setTimeout(r, 1000)); // the sampler's last answer must not be taken for the next reading
  // V8's memory reducer gives pages back only after the process has been idle a while; watch RSS settle untouched first.
  const settle = Number(process.env.MEM_SETTLE ?? 30);
  for (let t = 10; t <= settle; t += 10) {
    await new Promise((r) => setTimeout(r, 10_000));
    show(`idle ${t} s`, await mem(false));
  }
  const after = await mem(true, 'after');
  show('peak', peak);
  show('after (after GC)', after);
  console.log(`V8 spaces used, MB: before ${JSON.stringify(before.spaces)}\n                      after  ${JSON.stringify(after.spaces)}`);
  console.log(`${requests} HTTP requests, ${ROUNDS} × ${CLIENTS} push clients; RSS after/before ${(after.rss / before.rss).toFixed(2)}, heapUsed after/before ${(after.heapUsed / before.heapUsed).toFixed(2)}`);
  child.send({ ask: 'stop' });
  await new Promise((r) => child.once('exit', r));
  await rm(base, { recursive: true, force: true });
}
