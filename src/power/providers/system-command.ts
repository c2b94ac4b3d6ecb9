// Shell commands as a power device (PSU Control's SYSTEM switching and sensing): on/off must exit 0, the state
// command exits 0 for on and 1 for off; each bounded by the timeout.
import { spawn } from 'node:child_process';
import { deviceError, type PowerProvider } from './provider.ts';

/** Runs `command` in a shell; its exit code, or an error when it could not run or overran `timeoutS`. */
export function runShell(label: string, command: string, timeoutS: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, { shell: true, stdio: 'ignore', timeout: Math.round(timeoutS * 1000), killSignal: 'SIGKILL' });
    child.on('error', (e) => reject(deviceError(label, 'could not run', e)));
    child.on('close', (code, signal) => {
      if (signal !== null) reject(deviceError(label, `was stopped after ${timeoutS} s (${signal})`));
      else resolve(code ?? 1);
    });
  });
}

export function systemCommands(on: string, off: string, state: string, timeoutS: number): PowerProvider {
  const label = 'The power command';
  return {
    label,
    async setPower(value) {
      const cmd = value ? on : off;
      if (cmd.trim() === '') throw deviceError(label, `for ${value ? 'on' : 'off'} is not set`);
      const code = await runShell(`${label} \`${cmd}\``, cmd, timeoutS);
      if (code !== 0) throw deviceError(`${label} \`${cmd}\``, `exited with ${code}`);
    },
    async readState() {
      if (state.trim() === '') throw deviceError(label, 'for the state is not set');
      const code = await runShell(`${label} \`${state}\``, state, timeoutS);
      if (code === 0) return true;
      if (code === 1) return false;
      throw deviceError(`${label} \`${state}\``, `exited with ${code} (0 means on, 1 off)`);
    },
  };
}
