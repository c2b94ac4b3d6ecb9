// Test helper: which outside tools and shared data this machine has, each looked up once; a test needing one that is
// absent is skipped with the reason (`test(name, { skip: needs('socat') }, …)`) instead of failing.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHARED_DIR } from './shared-data.ts';

export type Tool = 'socat' | 'cc' | 'prusa-slicer' | 'ffmpeg' | 'mosquitto' | 'chromium' | 'shared-data' | 'tmpfs' | 'strace' | 'apprise';

/** Where the browser tests find Chromium (Debian's package) and the MQTT tests mosquitto. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const MOSQUITTO = process.env.MOSQUITTO_PATH ?? '/usr/sbin/mosquitto';

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};
const onPath = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

/** Whether a small tmpfs can be mounted here (root, or CAP_SYS_ADMIN): tried once, on a throwaway folder. */
function tmpfsMountable(): string | false {
  if (process.platform !== 'linux') return 'mounting a tmpfs needs Linux';
  const dir = mkdtempSync(join(tmpdir(), 'gantry-tmpfs-probe-'));
  try {
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { encoding: 'utf8' });
    if (r.status !== 0) return `cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): ${(r.stderr || r.error?.message || '').trim()}`;
    spawnSync('umount', [dir]);
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const checks: Record<Tool, () => string | false> = {
  'socat': () => !onPath('socat') && 'socat is not installed',
  'cc': () => !onPath('cc') && 'no C compiler (cc) to build the reference firmware',
  'prusa-slicer': () => !onPath('prusa-slicer') && 'prusa-slicer is not installed',
  'ffmpeg': () => !onPath('ffmpeg') && 'ffmpeg is not installed',
  'mosquitto': () => !executable(MOSQUITTO) && `no mosquitto at ${MOSQUITTO}`,
  'chromium': () => !executable(CHROMIUM) && `no chromium at ${CHROMIUM}`,
  'shared-data': () => !existsSync(SHARED_DIR) && `no shared data at ${SHARED_DIR} (GANTRY_SHARED names another place)`,
  'tmpfs': tmpfsMountable,
  'apprise': () => !onPath('apprise') && 'apprise is not installed (Debian: apt-get install apprise)',
  // Installed is not enough: a container may forbid ptrace, and old versions lack the seccomp filter.
  'strace': () => !onPath('strace') ? 'strace is not installed'
    : spawnSync('strace', ['-f', '-qq', '--seccomp-bpf', '-e', 'trace=fsync', '-o', '/dev/null', 'true']).status !== 0 && 'strace cannot trace here (ptrace not permitted, or no --seccomp-bpf)',
};
const found = new Map<Tool, string | false>();

/** False when every tool named is there, else the reason to skip (for `{ skip }` or `t.skip()`). */
export function needs(...tools: Tool[]): string | false {
  for (const tool of tools) {
    if (!found.has(tool)) found.set(tool, checks[tool]());
    const reason = found.get(tool);
    if (reason) return reason;
  }
  return false;
}
