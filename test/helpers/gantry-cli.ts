// Test helper: runs the built `gantry` command (bin/gantry.js) as a user would, with its output and exit code.
import { spawn } from 'node:child_process';

const BIN = new URL('../../bin/gantry.js', import.meta.url).pathname;

/** `gantry ARGS…` with GANTRY_BASEDIR cleared, so only the arguments choose the base dir. */
export function runGantry(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GANTRY_BASEDIR: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
