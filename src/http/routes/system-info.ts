// GET /api/system/info: host and runtime facts for support and farm managers (FDM Monster reads it).
import type { GantryApp } from '../types.ts';
import type { Paths } from '../../config/paths.ts';
import type { PrinterApi } from '../../printer/printer-service.ts';
import { collectSystemInfo } from '../../system/system-info.ts';
import { OCTOPRINT_COMPAT_VERSION } from '../../octoprint/version.ts';
import { Type } from '../../config/typebox.ts';
import { OpenObject } from '../../octoprint/schema-kit.ts';

/** Flat `key: value` facts (OctoPrint's dotted keys); collected from the host, so kept as they are. */
const InfoReply = Type.Object({ systeminfo: OpenObject({}) });

export function registerSystemInfoRoutes(app: GantryApp, deps: { version: string; paths: Paths; printer: PrinterApi }): void {
  app.get('/api/system/info', { config: { access: 'SYSTEM' }, schema: { response: { 200: InfoReply } } }, async (request) => ({
    systeminfo: await collectSystemInfo({
      version: deps.version,
      compatVersion: OCTOPRINT_COMPAT_VERSION,
      uploadsDir: deps.paths.uploads,
      printer: { state: deps.printer.state().text, firmware: deps.printer.firmwareName() },
      userAgent: request.headers['user-agent'],
    }),
  }));
}
