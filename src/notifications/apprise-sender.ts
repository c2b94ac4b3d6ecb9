// Apprise's CLI (Debian's `apprise`) for every other scheme — Telegram, Discord, Pushover, e-mail and ~100 more. The URL
// goes in APPRISE_URLS, not the command line, so other users of the machine never see its token in `ps`.
import { spawn } from 'node:child_process';
import type { Notification, SendOptions, Sender } from './notification.ts';

export const APPRISE_COMMAND = process.env.GANTRY_APPRISE ?? 'apprise';

let probe: Promise<string | null> | undefined;
/** Apprise's version, or null when it is not installed; asked once per process. */
export function appriseVersion(): Promise<string | null> {
  probe ??= new Promise((resolve) => {
    const child = spawn(APPRISE_COMMAND, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { if (out.length < 4096) out += d; });
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code === 0 ? (/^Apprise v(\d{1,4}\.\d{1,4}(?:\.\d{1,4})?)/m.exec(out)?.[1] ?? 'unknown') : null));
  });
  return probe;
}

/** What Apprise's exit codes mean (its CLI: 1 a send failed, 2 bad parameters, 3 nothing to notify). */
const EXIT: Record<number, string> = { 1: 'apprise could not deliver it', 2: 'apprise refused the parameters', 3: 'apprise found no valid URL' };

export class AppriseSender implements Sender {
  readonly kind = 'apprise';
  constructor(private readonly url: string) {}

  async send(n: Notification, opts: SendOptions): Promise<void> {
    if ((await appriseVersion()) === null) throw new Error('apprise is not installed (Debian: apt-get install apprise)');
    const args = ['-t', n.title, '-b', n.body, '-n', n.type];
    if (n.snapshot) args.push('-a', n.snapshot.file);
    await new Promise<void>((resolve, reject) => {
      const child = spawn(APPRISE_COMMAND, args, {
        stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, APPRISE_URLS: this.url },
        signal: AbortSignal.any([opts.signal, AbortSignal.timeout(opts.timeoutMs)]), killSignal: 'SIGKILL',
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => { if (err.length < 2048) err += d; });
      child.on('error', (e) => reject(e.name === 'AbortError' ? new Error(`apprise took longer than ${opts.timeoutMs / 1000} s`) : e));
      child.on('close', (code) => {
        if (code === 0) return resolve();
        // Apprise prints its own reason (URLs in it are its privacy form); the last line is the useful one.
        const last = err.trim().split('\n').pop()?.slice(0, 300);
        reject(new Error(`${EXIT[code ?? -1] ?? `apprise exited with ${code}`}${last ? `: ${last}` : ''}`));
      });
    });
  }
}
