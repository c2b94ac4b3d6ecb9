// System commands: core host actions (shutdown, reboot, restart) and user-defined actions from config, run through the shell off the event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import type { ConfigSlice } from '../config/config-slice.ts';
import type { Logger } from '../core/logger.ts';
import { DomainError, ErrorCodes, invalid, notFound } from '../core/errors.ts';

export type CommandSource = 'core' | 'custom';
export const COMMAND_SOURCES: readonly CommandSource[] = ['core', 'custom'];
/** The action value that marks a separator line in the system menu. */
export const DIVIDER = 'divider';

export interface SystemCommand {
  source: CommandSource;
  action: string;
  name: string;
  confirm?: string;
  command?: string;
  /** Return at once and let the command run on. */
  async: boolean;
  /** A non-zero exit code is not an error. */
  ignore: boolean;
}

const CORE: ReadonlyArray<{ action: string; key: 'systemShutdownCommand' | 'systemRestartCommand' | 'serverRestartCommand'; name: string; confirm: string }> = [
  { action: 'shutdown', key: 'systemShutdownCommand', name: 'Shutdown system', confirm: 'You are about to shutdown the system.' },
  { action: 'reboot', key: 'systemRestartCommand', name: 'Reboot system', confirm: 'You are about to reboot the system.' },
  { action: 'restart', key: 'serverRestartCommand', name: 'Restart Gantry', confirm: 'You are about to restart the Gantry server.' },
];

const OUTPUT_TAIL = 2000;

export interface SystemCommandsOptions {
  /** Longest a synchronous command may run before it is killed (ms). */
  timeoutMs?: number;
}

export class SystemCommands {
  private readonly timeoutMs: number;
  private readonly running = new Set<ChildProcess>();

  constructor(private readonly config: ConfigSlice<'server' | 'system'>, private readonly logger: Logger, opts: SystemCommandsOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  async start(): Promise<void> {}

  /** Synchronous commands still running are killed; async ones (a restart, say) are left to finish on their own. */
  async stop(): Promise<void> {
    for (const child of this.running) killGroup(child, 'SIGTERM');
    this.running.clear();
  }

  isSource(source: string): source is CommandSource {
    return (COMMAND_SOURCES as readonly string[]).includes(source);
  }

  /** Core commands appear only when their command line is configured (they are useless otherwise). */
  list(source: CommandSource): SystemCommand[] {
    const c = this.config.get();
    if (source === 'core') {
      return CORE.filter((d) => c.server.commands[d.key]).map((d) => ({
        source: 'core', action: d.action, name: d.name, confirm: d.confirm, command: c.server.commands[d.key] ?? undefined,
        // Restarting or shutting down ends this process; waiting for the exit code would never answer.
        async: true, ignore: true,
      }));
    }
    return c.system.actions.map((a) => ({
      source: 'custom',
      action: a.action,
      name: a.name ?? a.action,
      confirm: typeof a.confirm === 'string' && a.confirm ? a.confirm : a.confirm === true ? `You are about to run "${a.name ?? a.action}".` : undefined,
      command: a.command,
      async: a.async === true,
      ignore: a.ignore === true,
    }));
  }

  /** Runs the command; resolves when it finished (or at once for async ones). */
  async execute(source: string, action: string): Promise<void> {
    if (!this.isSource(source)) throw notFound(`Unknown command source: ${source}`);
    const def = this.list(source).find((d) => d.action === action);
    if (!def) throw notFound(`No command ${action} for source ${source}`);
    if (def.action === DIVIDER) throw invalid('Dividers cannot be executed');
    if (!def.command) throw new DomainError(ErrorCodes.INTERNAL, `Command for ${source}:${action} does not define a command line`);
    const label = `${source}:${action}`;
    this.logger.info({ command: label }, 'running system command');

    if (def.async) {
      // Nobody reads an async command's output; pipes left unread would stall it once they fill.
      const child = this.spawn(def.command, 'ignore');
      child.on('error', (err) => this.logger.warn({ err, command: label }, 'system command failed to start'));
      child.on('exit', (code, signal) => this.logger.info({ command: label, code, signal }, 'system command finished'));
      child.unref();
      return;
    }
    const { code, output, timedOut, error } = await this.run(def.command);
    if (error) throw new DomainError(ErrorCodes.INTERNAL, `Command for ${label} could not be started: ${error.message}`);
    if (timedOut) throw new DomainError(ErrorCodes.INTERNAL, `Command for ${label} did not finish within ${this.timeoutMs / 1000} s`);
    if (code !== 0 && !def.ignore) {
      throw new DomainError(ErrorCodes.INTERNAL, `Command for ${label} failed with return code ${code}: ${output.trim()}`);
    }
    if (code !== 0) this.logger.info({ command: label, code }, 'system command returned non-zero, ignored');
  }

  private spawn(command: string, output: 'pipe' | 'ignore' = 'pipe'): ChildProcess {
    // Own process group so a timeout can kill the whole pipeline, not just the shell.
    return spawn(command, { shell: true, detached: true, stdio: ['ignore', output, output] });
  }

  private run(command: string): Promise<{ code: number | null; output: string; timedOut: boolean; error?: Error }> {
    return new Promise((resolve) => {
      const child = this.spawn(command);
      this.running.add(child);
      let output = '';
      let timedOut = false;
      const collect = (chunk: Buffer) => { output = (output + chunk.toString('utf8')).slice(-OUTPUT_TAIL); };
      child.stdout?.on('data', collect);
      child.stderr?.on('data', collect);
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child, 'SIGTERM');
        setTimeout(() => killGroup(child, 'SIGKILL'), 2000).unref();
      }, this.timeoutMs);
      let settled = false;
      const finish = (code: number | null, error?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.running.delete(child);
        resolve({ code, output, timedOut, error });
      };
      child.on('error', (err) => finish(null, err));
      child.on('close', (code) => finish(code));
    });
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}
