// The systemd unit `gantry install-service` writes: text for a system or user unit running `gantry serve` as the current user, and where it goes.
import { mkdir, readFile } from 'node:fs/promises';
import { homedir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../core/atomic-file.ts';
import { DomainError } from '../core/errors.ts';
import { PACKAGE_ROOT } from '../core/package-root.ts';

export type UnitScope = 'system' | 'user';

export interface UnitOptions {
  scope: UnitScope;
  /** Absolute path of the node binary (systemd does not search a user's PATH, and nvm's node is not on its PATH). */
  node: string;
  /** Options for node itself, before bin/gantry.js (see serviceNodeFlags). */
  nodeFlags?: readonly string[];
  /** Absolute path of bin/gantry.js. */
  bin: string;
  baseDir: string;
  /** The account it runs as (system units; a user unit always runs as its owner). */
  user: string;
  /** Supplementary group that owns serial ports (Debian/Raspberry Pi OS: dialout). */
  serialGroup: string;
  host?: string;
  port?: number;
}

/** systemd's quoting for one ExecStart= word: double quotes when it has spaces or quotes, `$` and `%` doubled. */
function word(s: string): string {
  const escaped = s.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /[\s"'\\]/.test(escaped) ? `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : escaped;
}

/**
 * The V8 options bin/gantry.js wants on node's command line where V8 has its memory balancer (V8 ≥ 12.4: Node ≥ 22),
 * and the ceiling it sets on the young generation (its SEMI_SPACE_MB).
 * Started without them, the launcher re-executes itself to add them, which costs every start a second boot of node
 * (restarts on Node 24, medians of 11 alternating: 502 → 446 ms). They fit only the Node line that wrote the unit: an
 * older node refuses an option it does not know, hence the unit's note to run install-service again after changing it.
 */
export function serviceNodeFlags(v8Version: string = process.versions.v8): string[] {
  const [major, minor] = v8Version.split('.').map(Number);
  return major * 100 + minor >= 1204 ? ['--memory-balancer', '--expose-gc', '--max-semi-space-size=2'] : [];
}

export function renderUnit(o: UnitOptions): string {
  const args = [o.node, ...(o.nodeFlags ?? []), o.bin, 'serve', '--basedir', o.baseDir];
  if (o.host) args.push('--host', o.host);
  if (o.port !== undefined) args.push('--port', String(o.port));
  const lines = [
    '# Gantry, a 3D-printer host with an OctoPrint-compatible API. The paths below are absolute:',
    '# run `gantry install-service` again after moving Node.js or Gantry, or changing the Node.js version.',
    '[Unit]',
    'Description=Gantry 3D printer host',
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=exec',
  ];
  if (o.scope === 'system') {
    lines.push(`User=${o.user}`);
    // Serial ports are root:dialout 0660; the group is added here even when the account is not in it.
    lines.push(`SupplementaryGroups=${o.serialGroup}`);
    // The printer link thread asks for nice -10 (serial.linkThreadNice) so firmware replies are not kept waiting by
    // HTTP and push work; RLIMIT_NICE lets the unprivileged account have it.
    lines.push('LimitNICE=-10');
  }
  lines.push(
    // glibc malloc sized for a small board (bin/gantry.js sets the same itself where Node has process.execve).
    'Environment=MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536',
    `ExecStart=${args.map(word).join(' ')}`,
    // The console copy of the log goes to the journal (readable lines); logs/gantry.log keeps JSON.
    'Restart=on-failure',
    'RestartSec=5',
    // Gantry sends Shutdown to push clients and lets event commands finish (up to 5 s) before it exits.
    'TimeoutStopSec=20',
    '',
    '[Install]',
    `WantedBy=${o.scope === 'system' ? 'multi-user.target' : 'default.target'}`,
    '',
  );
  return lines.join('\n');
}

/** Where the unit file goes: /etc/systemd/system, or ~/.config/systemd/user (XDG_CONFIG_HOME honoured). */
export function unitPath(scope: UnitScope, env: NodeJS.ProcessEnv = process.env): string {
  if (scope === 'system') return '/etc/systemd/system/gantry.service';
  const config = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(config, 'systemd', 'user', 'gantry.service');
}

/** Whether the current process belongs to `group` (by /etc/group), so a user unit can open serial ports. */
export async function inGroup(group: string): Promise<boolean> {
  const text = await readFile('/etc/group', 'utf8').catch(() => '');
  const entry = text.split('\n').map((l) => l.split(':')).find((f) => f[0] === group);
  if (!entry) return false;
  const gid = Number(entry[2]);
  if (process.getgroups?.().includes(gid) || process.getgid?.() === gid) return true;
  return (entry[3] ?? '').split(',').includes(userInfo().username);
}

export async function writeUnit(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, text);
}

export interface InstallOptions {
  /** Default: a system unit when run as root (through sudo: for the sudo caller), else a user unit. */
  scope?: UnitScope;
  /** Only return the unit text (for `| sudo tee`), write nothing. */
  print?: boolean;
  baseDir?: string;
  host?: string;
  port?: number;
  env?: NodeJS.ProcessEnv;
}

/** The account a unit is for: the sudo caller when root runs this through sudo, else the current user. */
async function account(env: NodeJS.ProcessEnv): Promise<{ name: string; home: string }> {
  const me = userInfo();
  if (me.uid !== 0 || !env.SUDO_USER) return { name: me.username, home: env.HOME || me.homedir };
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  const entry = passwd.split('\n').map((l) => l.split(':')).find((f) => f[0] === env.SUDO_USER);
  return { name: env.SUDO_USER, home: entry?.[5] || `/home/${env.SUDO_USER}` };
}

/** `gantry install-service`: writes the unit (or returns it with `print`) and returns what to run next. */
export async function installService(o: InstallOptions): Promise<string> {
  const env = o.env ?? process.env;
  const scope: UnitScope = o.scope ?? (userInfo().uid === 0 ? 'system' : 'user');
  const who = await account(env);
  const serialGroup = 'dialout';
  const text = renderUnit({
    scope, node: process.execPath, nodeFlags: serviceNodeFlags(), bin: fileURLToPath(new URL('bin/gantry.js', PACKAGE_ROOT)),
    baseDir: resolve(o.baseDir ?? join(who.home, '.gantry')), user: who.name, serialGroup, host: o.host, port: o.port,
  });
  if (o.print) return text;
  const path = unitPath(scope, env);
  if (scope === 'system' && userInfo().uid !== 0) {
    throw new DomainError('FORBIDDEN', `writing ${path} needs root: run \`gantry install-service --system --print | sudo tee ${path}\`, or install a user unit with --user`);
  }
  await writeUnit(path, text);
  const ctl = scope === 'system' ? 'sudo systemctl' : 'systemctl --user';
  const steps = [`wrote ${path}`, 'next:', `  ${ctl} daemon-reload`, `  ${ctl} enable --now gantry`, `  ${scope === 'system' ? 'journalctl' : 'journalctl --user'} -u gantry -f    # its log`];
  if (scope === 'user') {
    steps.push(`  sudo loginctl enable-linger ${who.name}    # keep it running without a login session, and start it at boot`);
    if (!(await inGroup(serialGroup))) {
      steps.push(`  sudo usermod -aG ${serialGroup} ${who.name}    # ${who.name} is not in ${serialGroup}: serial ports stay closed to a user unit (log in again after)`);
    }
  }
  return `${steps.join('\n')}\n`;
}
