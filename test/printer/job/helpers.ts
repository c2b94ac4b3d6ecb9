// Helpers for job tests: upload through the API, JSON calls, waiting on events, generated G-code.
import type { TestServer } from '../../helpers/server.ts';
import { multipartBody, type FormPart } from '../../files/multipart.ts';

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function uploadFile(s: TestServer, filename: string, content: string | Buffer, extra: FormPart[] = [], location = 'local'): Promise<Response> {
  const { body, contentType } = multipartBody([...extra, { name: 'file', filename, value: content }]);
  return s.api(`/api/files/${location}`, { method: 'POST', body, headers: { 'Content-Type': contentType } });
}

export async function jobCommand(s: TestServer, command: string, action?: string): Promise<number> {
  const r = await s.api('/api/job', { method: 'POST', json: action ? { command, action } : { command } });
  await r.arrayBuffer();
  return r.status;
}

export async function job(s: TestServer): Promise<Json> {
  return (await (await s.api('/api/job')).json()) as Json;
}

/** Every event with its payload, in order. */
export function recorder(s: TestServer): { events: Array<{ name: string; payload: Json }>; names: () => string[] } {
  const events: Array<{ name: string; payload: Json }> = [];
  s.events.onAny('test-recorder', (name, payload) => { events.push({ name, payload: payload as Json }); });
  return { events, names: () => events.map((e) => e.name) };
}

/** A small generated print (no heat-up, so it runs quickly on the virtual printer). */
export function smallGcode(moves = 40, withM73 = false): string {
  const lines = ['G28', 'G90', 'M83'];
  for (let i = 0; i < moves; i++) {
    if (withM73 && i % 10 === 0) lines.push(`M73 P${Math.round((i / moves) * 100)} R${Math.round((moves - i) / 20)}`);
    lines.push(`G1 X${(i % 20) * 5 + 10} Y${Math.floor(i / 20) * 5 + 10} Z0.3 E0.5 F3000 ; move ${i}`);
  }
  lines.push('M84', '');
  return lines.join('\n');
}
