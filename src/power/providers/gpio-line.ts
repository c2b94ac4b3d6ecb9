// A GPIO line through the Linux GPIO character device with Debian's gpiod tools (libgpiod 1.6: `gpioset <chip>
// <line>=<v>`, `gpioget <chip> <line>`), for PSU Control's GPIO switching and sensing.
import { execFile } from 'node:child_process';
import { deviceError } from './provider.ts';

function run(label: string, file: string, args: string[], timeoutS: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: Math.round(timeoutS * 1000) }, (err, stdout, stderr) => {
      if (err) reject(deviceError(label, (err as NodeJS.ErrnoException).code === 'ENOENT' ? `cannot be used: ${file} is not installed (Debian package gpiod)` : `failed: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

/** `/dev/gpiochip0` or `gpiochip0` → what gpiod's tools take. */
const chipName = (device: string) => (device.trim() === '' ? 'gpiochip0' : device.trim().replace(/^\/dev\//, ''));

export async function gpioSet(device: string, line: number, on: boolean, invert: boolean, timeoutS: number): Promise<void> {
  const chip = chipName(device);
  await run(`GPIO ${chip} line ${line}`, 'gpioset', [chip, `${line}=${on !== invert ? 1 : 0}`], timeoutS);
}

export async function gpioGet(device: string, line: number, invert: boolean, bias: '' | 'PULL_UP' | 'PULL_DOWN', timeoutS: number): Promise<boolean> {
  const chip = chipName(device);
  const b = bias === 'PULL_UP' ? ['-B', 'pull-up'] : bias === 'PULL_DOWN' ? ['-B', 'pull-down'] : [];
  const out = (await run(`GPIO ${chip} line ${line}`, 'gpioget', [...b, chip, String(line)], timeoutS)).trim();
  if (out !== '0' && out !== '1') throw deviceError(`GPIO ${chip} line ${line}`, `read "${out}"`);
  return (out === '1') !== invert;
}
