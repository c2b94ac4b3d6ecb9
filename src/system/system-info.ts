// System information for support and farm managers (`GET /api/system/info`): host, runtime and settings facts as flat dotted keys.
import { cpus, totalmem, freemem, platform, arch, release, uptime } from 'node:os';
import { statfs } from 'node:fs/promises';

export interface SystemInfoInput {
  version: string;
  compatVersion: string;
  uploadsDir: string;
  printer: { state: string; firmware: string };
  userAgent?: string;
}

/** Flat key → value map in the style of OctoPrint's system info (`env.hardware.cores`, ...). */
export async function collectSystemInfo(input: SystemInfoInput): Promise<Record<string, string | number | boolean | null>> {
  const disk = await statfs(input.uploadsDir).catch(() => undefined);
  const c = cpus();
  return {
    'systeminfo.generator': 'gantry',
    'octoprint.version': input.compatVersion,
    'octoprint.safe_mode': false,
    'gantry.version': input.version,
    'browser.user_agent': input.userAgent ?? null,
    'env.os.platform': platform(),
    'env.os.release': release(),
    'env.os.bits': arch().includes('64') ? 64 : 32,
    'env.os.arch': arch(),
    'env.os.uptime': Math.round(uptime()),
    'env.hardware.cores': c.length,
    'env.hardware.freq': c[0]?.speed ?? null,
    'env.hardware.ram': totalmem(),
    'env.hardware.ram_free': freemem(),
    'env.node.version': process.versions.node,
    'env.disk.uploads_free': disk ? disk.bavail * disk.bsize : null,
    'env.disk.uploads_total': disk ? disk.blocks * disk.bsize : null,
    'printer.state': input.printer.state,
    'printer.firmware': input.printer.firmware,
  };
}
