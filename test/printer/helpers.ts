// Helpers for printer HTTP tests: a server connected to the virtual printer, and polling for a state.
import type { TestContext } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function stateText(server: TestServer): Promise<string> {
  const r = await server.api('/api/connection');
  const body = (await r.json()) as { current: { state: string } };
  return body.current.state;
}

/** A server whose virtual printer is connected and Operational (`baseDir`: an existing one, kept afterwards). */
export async function connectedServer(t: TestContext, settings: Record<string, unknown> = {}, opts: { baseDir?: string } = {}): Promise<TestServer> {
  const server = await startTestServer(t, { ...opts, settings: { devel: { virtualPrinter: { throttle: 0.001, busyInterval: 0.2 } }, ...settings } });
  const r = await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200 } });
  if (r.status !== 204) throw new Error(`connect answered ${r.status}`);
  await waitFor('Operational', async () => (await stateText(server)) === 'Operational' || undefined);
  // Let the start-up dialogue (M115, capabilities, M21, first report) finish.
  await waitFor('firmware info', () => server.printer.firmwareName() !== '' || undefined);
  return server;
}
