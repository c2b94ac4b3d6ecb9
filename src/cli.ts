// Command line: `gantry serve` runs the host; `gantry user …` and `gantry apikey` set it up headless.
import { parseArgs } from 'node:util';
import { channel } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import type { Gantry } from './main.ts';
import { defaultBaseDir, resolvePaths, createFolders } from './config/paths.ts';
import { ConfigStore, ConfigError } from './config/config-store.ts';
import { AccessService } from './access/access-service.ts';
import { systemClock } from './core/clock.ts';
import { silentLogger } from './core/logger.ts';
import { DomainError, ErrorCodes } from './core/errors.ts';
import { capHeapHeadroomAsLaunched } from './core/gc.ts';
import { stopOnSignals } from './core/process-end.ts';
import { findRunningServer, type ControlInfo } from './access/local-control.ts';
import { passwordProblem } from './access/password.ts';
import { PRINTER_USAGE } from './cli-printer.ts';

// main.ts pulls in every service; headless set-up commands start much faster without it.
const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const USAGE = `gantry ${VERSION} — 3D printer host with an OctoPrint-compatible API

Usage:
  gantry --version | -v
  gantry serve [--host H] [--port P] [--basedir DIR] [--log-level info|debug|trace|warn|error]
  gantry user list [--basedir DIR]
  gantry user add NAME --password PW [--admin] [--basedir DIR]
  gantry user remove NAME [--basedir DIR]
  gantry user password NAME --password PW [--basedir DIR]
  gantry apikey [--regenerate] [--basedir DIR]
${PRINTER_USAGE}
  gantry install-service [--user | --system] [--print] [--host H] [--port P] [--basedir DIR]
  gantry import-octoprint --from <octoprint basedir | backup .zip> [--basedir DIR] [--dry-run] [--merge] [--link]

While a server runs on the base dir, user, apikey and printer commands act through it (it sees changes at once).
On printer add, --basedir is the printer's own folder (default <basedir>/printers/NAME) and --server-basedir the server's.
`;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/** The server's rule for a password a person chose, checked here too when no server is running. */
function checkNewPassword(password: string): void {
  const weak = passwordProblem(password);
  if (weak) throw new DomainError('INVALID_REQUEST', weak);
}

async function offlineAccess(baseDir: string): Promise<{ config: ConfigStore; access: AccessService }> {
  const paths = resolvePaths(baseDir);
  await createFolders(paths);
  const config = await ConfigStore.load(paths.config);
  const access = new AccessService(config.slice('accessControl', 'api', 'server'), { users: paths.users, groups: `${paths.base}/groups.yaml`, appKeys: `${paths.data}/appkeys/keys.yaml` }, systemClock, silentLogger);
  await access.users.load();
  return { config, access };
}

/** One API call to the running server with its local control token; its JSON error becomes the command's error. */
async function remoteCall<T>(server: ControlInfo, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'X-Api-Key': server.token, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) {
    let message = `${method} ${path} answered ${res.status}`;
    try { message = (JSON.parse(text) as { error?: string }).error ?? message; } catch { /* not JSON */ }
    throw new DomainError(res.status === 409 ? ErrorCodes.CONFLICT : ErrorCodes.INVALID_REQUEST, message);
  }
  return (text ? JSON.parse(text) : {}) as T;
}

/**
 * `gantry user …` and `gantry apikey` while a server runs on the base dir: through its API, so the server knows at
 * once and nothing it holds in memory overwrites the change later.
 */
async function remoteCommand(server: ControlInfo, cmd: string, sub: string | undefined, name: string | undefined,
  values: { password?: string; admin?: boolean; regenerate?: boolean }): Promise<number> {
  process.stderr.write(`(through the server running at ${server.url})\n`);
  const user = (n: string) => `/api/access/users/${encodeURIComponent(n)}`;
  if (cmd === 'apikey') {
    const settings = await remoteCall<{ api?: { key?: string | null } }>(server, 'GET', '/api/settings');
    const key = values.regenerate || !settings.api?.key
      ? (await remoteCall<{ apikey: string }>(server, 'POST', '/api/settings/apikey')).apikey
      : settings.api.key;
    process.stdout.write(`${key}\n`);
    return 0;
  }
  switch (sub) {
    case 'list':
      for (const u of (await remoteCall<{ users: Array<{ name: string; active: boolean; groups: string[] }> }>(server, 'GET', '/api/access/users')).users) {
        process.stdout.write(`${u.name}\t${u.active ? 'active' : 'inactive'}\t${u.groups.join(',')}\n`);
      }
      return 0;
    case 'add':
      if (!name || !values.password) throw new DomainError('INVALID_REQUEST', 'usage: gantry user add NAME --password PW [--admin]');
      await remoteCall(server, 'POST', '/api/access/users', { name, password: values.password, active: true, ...(values.admin ? { groups: ['admins', 'users'] } : {}) });
      process.stdout.write(`added user ${name}\n`);
      return 0;
    case 'remove':
      if (!name) throw new DomainError('INVALID_REQUEST', 'usage: gantry user remove NAME');
      await remoteCall(server, 'DELETE', user(name));
      process.stdout.write(`removed user ${name}\n`);
      return 0;
    case 'password':
      if (!name || !values.password) throw new DomainError('INVALID_REQUEST', 'usage: gantry user password NAME --password PW');
      await remoteCall(server, 'PUT', `${user(name)}/password`, { password: values.password });
      process.stdout.write(`changed password of ${name}\n`);
      return 0;
    default:
      process.stdout.write(USAGE);
      return 1;
  }
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        host: { type: 'string' },
        port: { type: 'string' },
        basedir: { type: 'string' },
        'log-level': { type: 'string' },
        password: { type: 'string' },
        admin: { type: 'boolean' },
        regenerate: { type: 'boolean' },
        user: { type: 'boolean' },
        system: { type: 'boolean' },
        print: { type: 'boolean' },
        from: { type: 'string' },
        'dry-run': { type: 'boolean' },
        merge: { type: 'boolean' },
        link: { type: 'boolean' },
        'serial-port': { type: 'string' },
        virtual: { type: 'boolean' },
        baudrate: { type: 'string' },
        'http-port': { type: 'string' },
        'server-basedir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (err) {
    // A mistyped option is the user's slip, not a crash: say which, and how it is used.
    if (!(err instanceof TypeError && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS_'))) throw err;
    process.stderr.write(`gantry: ${err.message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const baseDir = values.basedir || process.env.GANTRY_BASEDIR || defaultBaseDir();
  const [cmd, sub, name] = positionals;
  if (values.version || cmd === 'version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (values.help || !cmd) {
    process.stdout.write(USAGE);
    return cmd ? 0 : 1;
  }

  if (cmd === 'serve') {
    const port = values.port !== undefined ? Number(values.port) : undefined;
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new Error(`invalid --port ${values.port}`);
    // Handlers go in before anything is printed: a supervisor may signal as soon as it reads the "up" line, and a
    // signal during start-up must still end in an orderly stop once the services are up.
    const state: { starting?: Promise<Gantry> } = {};
    const signals = stopOnSignals(() => state.starting);
    const logLevel = values['log-level'] || process.env.GANTRY_LOG_LEVEL || undefined;
    if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel)) throw new Error(`invalid --log-level ${logLevel} (one of ${LOG_LEVELS.join(', ')})`);
    const { startGantry } = await import('./main.ts');
    state.starting = startGantry({ baseDir, host: values.host, port, logToConsole: true, logLevel });
    const gantry = await state.starting;
    if (!signals.signalled()) process.stdout.write(`Gantry ${VERSION} is up at ${gantry.url} (base dir ${gantry.paths.base})\n`);
    // The launcher (bin/gantry.js) holds back V8's optimising compilers until now.
    channel('gantry:serving').publish({ url: gantry.url });
    // After the first requests' turn, not in their way.
    setImmediate(capHeapHeadroomAsLaunched);
    return -1; // keep running
  }

  if (cmd === 'user' || cmd === 'apikey') {
    const running = await findRunningServer(baseDir);
    if (running) return remoteCommand(running, cmd, sub, name, values);
  }

  if (cmd === 'user') {
    const { access } = await offlineAccess(baseDir);
    switch (sub) {
      case 'list':
        for (const u of access.users.listUsers()) {
          process.stdout.write(`${u.name}\t${u.active ? 'active' : 'inactive'}\t${u.groups.join(',')}\n`);
        }
        return 0;
      case 'add':
        if (!name || !values.password) throw new DomainError('INVALID_REQUEST', 'usage: gantry user add NAME --password PW [--admin]');
        checkNewPassword(values.password);
        await access.users.addUser({ name, password: values.password, groups: values.admin ? ['admins', 'users'] : undefined });
        process.stdout.write(`added user ${name}\n`);
        return 0;
      case 'remove':
        if (!name) throw new DomainError('INVALID_REQUEST', 'usage: gantry user remove NAME');
        await access.users.removeUser(name);
        process.stdout.write(`removed user ${name}\n`);
        return 0;
      case 'password':
        if (!name || !values.password) throw new DomainError('INVALID_REQUEST', 'usage: gantry user password NAME --password PW');
        checkNewPassword(values.password);
        await access.users.setPassword(name, values.password);
        process.stdout.write(`changed password of ${name}\n`);
        return 0;
      default:
        process.stdout.write(USAGE);
        return 1;
    }
  }

  if (cmd === 'apikey') {
    const { config, access } = await offlineAccess(baseDir);
    const key = values.regenerate || !config.current.api.key ? await access.regenerateGlobalKey() : config.current.api.key;
    process.stdout.write(`${key}\n`);
    return 0;
  }

  if (cmd === 'printer') {
    const { printerCommand } = await import('./cli-printer.ts');
    const addsWithOwnDir = sub === 'add';
    return printerCommand({
      serverBaseDir: (addsWithOwnDir ? values['server-basedir'] : values.basedir) || process.env.GANTRY_BASEDIR || defaultBaseDir(),
      sub, name, serialPort: values['serial-port'], virtual: values.virtual, baudrate: values.baudrate, httpPort: values['http-port'],
      printerBaseDir: addsWithOwnDir ? values.basedir : undefined,
      remoteCall, out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text),
    });
  }

  if (cmd === 'install-service') {
    const { installService } = await import('./system/systemd-unit.ts');
    const port = values.port !== undefined ? Number(values.port) : undefined;
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new Error(`invalid --port ${values.port}`);
    process.stdout.write(await installService({
      scope: values.system ? 'system' : values.user ? 'user' : undefined,
      print: Boolean(values.print), baseDir: values.basedir || process.env.GANTRY_BASEDIR || undefined, host: values.host, port,
    }));
    return 0;
  }

  if (cmd === 'import-octoprint') {
    if (!values.from) throw new DomainError('INVALID_REQUEST', 'usage: gantry import-octoprint --from <octoprint basedir | backup .zip> [--basedir DIR] [--dry-run] [--merge] [--link]');
    const { importOctoPrint } = await import('./import/import-octoprint.ts');
    await importOctoPrint({ from: values.from, baseDir, dryRun: values['dry-run'], merge: values.merge, link: values.link,
      out: (text) => process.stdout.write(text) });
    return 0;
  }

  process.stdout.write(USAGE);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => { if (code >= 0) process.exit(code); },
  (err: unknown) => {
    if (err instanceof ConfigError || err instanceof DomainError) process.stderr.write(`gantry: ${err.message}\n`);
    else process.stderr.write(`gantry: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(2);
  },
);
