// `/printer/NAME/…` on the main port: each farm printer's own HTTP server (its API, downloads, SockJS and UI) under a
// path prefix, as a reverse proxy with X-Script-Name would mount it, before the main app or its push channel sees it.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { withoutTrailing } from '../core/text.ts';

export const PRINTER_PATH = '/printer/';

/** The server a printer's requests go to (not necessarily listening: its request and upgrade listeners are used). */
export type PrinterServerLookup = (name: string) => Server | undefined;

interface Target {
  server: Server;
  prefix: string;
  rest: string;
}

function first(h: string | string[] | undefined): string {
  const v = Array.isArray(h) ? h[0] : h;
  return v ? withoutTrailing(v.split(',')[0].trim(), '/') : '';
}

function targetOf(req: IncomingMessage, lookup: PrinterServerLookup): Target | undefined | 'redirect' {
  const url = req.url ?? '/';
  if (!url.startsWith(PRINTER_PATH)) return undefined;
  const end = url.slice(PRINTER_PATH.length).search(/[/?]/);
  const nameEnd = end === -1 ? url.length : PRINTER_PATH.length + end;
  let name: string;
  try {
    name = decodeURIComponent(url.slice(PRINTER_PATH.length, nameEnd));
  } catch {
    return undefined;
  }
  const server = lookup(name);
  if (!server) return undefined;
  const rest = url.slice(nameEnd);
  if (rest === '' || rest.startsWith('?')) return 'redirect';
  return { server, prefix: `${PRINTER_PATH}${encodeURIComponent(name)}`, rest };
}

/** The request as the printer's server sees it: the path without the prefix, the prefix in X-Script-Name. */
function rewrite(req: IncomingMessage, t: Target): void {
  const outer = first(req.headers['x-script-name']) || first(req.headers['x-forwarded-prefix']);
  req.headers['x-script-name'] = outer + t.prefix;
  delete req.headers['x-forwarded-prefix'];
  req.url = t.rest;
}

/**
 * Puts the `/printer/NAME/` dispatch in front of `server`'s own request listeners (install it after everything else
 * that wraps them, such as the push transports), and takes upgrades under a printer's prefix. Returns the removal.
 * `claimsUpgrade` tells the main server's push channel which upgrade paths are not its own.
 */
export function mountPrinters(server: Server, lookup: PrinterServerLookup): { claimsUpgrade: (path: string) => boolean; unmount: () => void } {
  const previous = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const t = targetOf(req, lookup);
    if (t === 'redirect') {
      // `/printer/NAME` → `/printer/NAME/`: the UI's relative URLs need the trailing slash.
      const url = req.url ?? '';
      const q = url.indexOf('?');
      const outer = first(req.headers['x-script-name']) || first(req.headers['x-forwarded-prefix']);
      res.writeHead(301, { Location: `${outer}${q === -1 ? url : url.slice(0, q)}/${q === -1 ? '' : url.slice(q)}` }).end();
      return;
    }
    if (t) {
      rewrite(req, t);
      t.server.emit('request', req, res);
      return;
    }
    for (const l of previous) l.call(server, req, res);
  };
  server.on('request', onRequest);
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const t = targetOf(req, lookup);
    if (!t || t === 'redirect') {
      // The main push channel leaves every /printer/ upgrade to this listener: one for no printer is refused here.
      if ((req.url ?? '').startsWith(PRINTER_PATH)) socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    rewrite(req, t);
    t.server.emit('upgrade', req, socket, head);
  };
  server.on('upgrade', onUpgrade);
  return {
    claimsUpgrade: (path) => path.startsWith(PRINTER_PATH),
    unmount: () => {
      server.off('request', onRequest);
      server.off('upgrade', onUpgrade);
      for (const l of previous) server.on('request', l);
    },
  };
}
