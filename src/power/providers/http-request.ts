// A configured HTTP request as a power device: a URL (method, body) for on and for off, and optionally a URL whose
// answer tells the state (text containing a word, or a JSON field's value).
import type { PowerDeviceSettings } from './settings.ts';
import { deviceError, request, type PowerProvider } from './provider.ts';

/** Whether `answer` says on: `path=value` looks a dotted path up in JSON; plain text is searched (case-insensitive). */
export function answerSaysOn(answer: string, match: string): boolean {
  const eq = match.indexOf('=');
  if (eq > 0) {
    let v: unknown;
    try { v = JSON.parse(answer); } catch { return false; }
    for (const k of match.slice(0, eq).split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    return String(v).toLowerCase() === match.slice(eq + 1).trim().toLowerCase();
  }
  return answer.toLowerCase().includes(match.toLowerCase());
}

export function httpRequest(s: PowerDeviceSettings): PowerProvider {
  const label = 'The power HTTP request';
  let commanded: boolean | undefined;
  return {
    label,
    async setPower(on) {
      const url = on ? s.onUrl : s.offUrl;
      if (url === '') throw deviceError(label, `for ${on ? 'on' : 'off'} is not set`);
      const body = s.method !== 'GET' && s.body !== '' ? s.body.replaceAll('{state}', on ? 'on' : 'off') : undefined;
      await request(`${label} to ${url}`, url, s.timeout, { method: s.method, ...(body !== undefined ? { body } : {}) });
      commanded = on;
    },
    async readState() {
      if (s.stateUrl === '') {
        if (commanded === undefined) throw deviceError(label, 'has no state URL and has not been switched yet');
        return commanded;
      }
      return answerSaysOn(await request(`${label} to ${s.stateUrl}`, s.stateUrl, s.timeout), s.stateOnMatch);
    },
  };
}
