// `gantry printer add|list|remove`: the farm's printers, through the running server's /api/farm/printers when one runs
// on the base dir (the change applies at once), otherwise in config.yaml on disk (it applies at the next start).
import { existsSync } from 'node:fs';
import { ConfigStore } from './config/config-store.ts';
import { resolvePaths } from './config/paths.ts';
import type { PrinterEntry } from './config/printers-schema.ts';
import { DomainError, ErrorCodes } from './core/errors.ts';
import { findRunningServer, type ControlInfo } from './access/local-control.ts';

export const PRINTER_USAGE = `  gantry printer list [--basedir DIR]
  gantry printer add NAME [--serial-port DEV | --virtual] [--baudrate B] [--http-port P] [--basedir PRINTER_DIR] [--server-basedir DIR]
  gantry printer remove NAME [--basedir DIR]`;

export interface PrinterCommandOptions {
  /** The server's base dir. */
  serverBaseDir: string;
  sub: string | undefined;
  name: string | undefined;
  serialPort?: string;
  virtual?: boolean;
  baudrate?: string;
  httpPort?: string;
  /** `printer add`: the printer's own folder. */
  printerBaseDir?: string;
  remoteCall: <T>(server: ControlInfo, method: string, path: string, body?: unknown) => Promise<T>;
  out: (text: string) => void;
  err: (text: string) => void;
}

interface Listed { name: string; httpPort: number | null; prefix: string; state: { text: string }; config: PrinterEntry | null }

const usage = (text: string) => new DomainError(ErrorCodes.INVALID_REQUEST, `usage: ${text.trim()}`);

function integer(text: string | undefined, what: string, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new DomainError(ErrorCodes.INVALID_REQUEST, `invalid ${what} ${text}`);
  return n;
}

function entryOf(o: PrinterCommandOptions): PrinterEntry {
  if (!o.name) throw usage(PRINTER_USAGE.split('\n')[1]);
  if (o.serialPort && o.virtual) throw new DomainError(ErrorCodes.INVALID_REQUEST, 'a printer has --serial-port or --virtual, not both');
  const baudrate = integer(o.baudrate, '--baudrate', 1, 10_000_000);
  const httpPort = integer(o.httpPort, '--http-port', 0, 65535);
  return {
    name: o.name,
    ...(o.serialPort ? { serialPort: o.serialPort } : {}),
    ...(o.virtual ? { virtual: true } : {}),
    ...(baudrate !== undefined ? { baudrate } : {}),
    ...(httpPort !== undefined ? { httpPort } : {}),
    ...(o.printerBaseDir ? { basedir: o.printerBaseDir } : {}),
  };
}

const line = (p: { name: string; httpPort: number | null; prefix: string; state?: string; port?: string | null }) =>
  `${p.name}\t${p.httpPort ?? '-'}\t${p.prefix}\t${p.port ?? '-'}${p.state ? `\t${p.state}` : ''}\n`;

export async function printerCommand(o: PrinterCommandOptions): Promise<number> {
  const server = await findRunningServer(o.serverBaseDir);
  if (server) {
    o.err(`(through the server running at ${server.url})\n`);
    switch (o.sub) {
      case 'list':
        for (const p of (await o.remoteCall<{ printers: Listed[] }>(server, 'GET', '/api/farm/printers')).printers) {
          o.out(line({ ...p, state: p.state.text, port: p.config ? (p.config.virtual ? 'VIRTUAL' : p.config.serialPort ?? null) : null }));
        }
        return 0;
      case 'add': {
        const added = await o.remoteCall<{ printer: Listed }>(server, 'POST', '/api/farm/printers', entryOf(o));
        o.out(`added printer ${added.printer.name}: ${server.url}${added.printer.prefix}${added.printer.httpPort ? ` and port ${added.printer.httpPort}` : ''}\n`);
        return 0;
      }
      case 'remove':
        if (!o.name) throw usage(PRINTER_USAGE.split('\n')[2]);
        await o.remoteCall(server, 'DELETE', `/api/farm/printers/${encodeURIComponent(o.name)}`);
        o.out(`removed printer ${o.name}\n`);
        return 0;
      default:
        throw usage(PRINTER_USAGE);
    }
  }
  // No server runs on this base dir: config.yaml changes, and the farm changes with the next start.
  const paths = resolvePaths(o.serverBaseDir);
  if (o.sub !== 'list' && !existsSync(paths.base)) throw new DomainError(ErrorCodes.NOT_FOUND, `no Gantry base dir at ${paths.base}`);
  const config = await ConfigStore.load(paths.config);
  const printers = config.current.printers;
  const later = () => o.err(`(no server is running on ${paths.base}: config.yaml changed; it applies when \`gantry serve\` starts)\n`);
  switch (o.sub) {
    case 'list':
      o.err(`(no server is running on ${paths.base}: the printers of config.yaml)\n`);
      o.out(line({ name: 'default', httpPort: config.current.server.port, prefix: '/printer/default/', port: config.current.serial.port }));
      for (const p of printers) o.out(line({ name: p.name, httpPort: p.httpPort ?? null, prefix: `/printer/${p.name}/`, port: p.virtual ? 'VIRTUAL' : p.serialPort ?? null }));
      return 0;
    case 'add': {
      const entry = entryOf(o);
      if (entry.name === 'default' || printers.some((p) => p.name === entry.name)) throw new DomainError(ErrorCodes.CONFLICT, `A printer named ${entry.name} exists already`);
      if (entry.httpPort && (entry.httpPort === config.current.server.port || printers.some((p) => p.httpPort === entry.httpPort))) {
        throw new DomainError(ErrorCodes.CONFLICT, `HTTP port ${entry.httpPort} is in use by another printer`);
      }
      await config.patch({ printers: [...printers, entry] });
      later();
      o.out(`added printer ${entry.name}\n`);
      return 0;
    }
    case 'remove':
      if (!o.name) throw usage(PRINTER_USAGE.split('\n')[2]);
      if (!printers.some((p) => p.name === o.name)) throw new DomainError(ErrorCodes.NOT_FOUND, `No printer named ${o.name}`);
      await config.patch({ printers: printers.filter((p) => p.name !== o.name) });
      later();
      o.out(`removed printer ${o.name}\n`);
      return 0;
    default:
      throw usage(PRINTER_USAGE);
  }
}
