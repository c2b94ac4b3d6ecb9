// Test helper: a real server whose virtual printer is connected and Operational, and the connect step on its own.
import type { TestContext } from 'node:test';
import { startTestServer, type TestServer } from './server.ts';
import { waitFor } from './wait.ts';

/** Settings that make the virtual printer quick enough for a whole print in a second or two. */
export const FAST_PRINTER = { devel: { virtualPrinter: { throttle: 0.001, busyInterval: 0.2 } } };

export async function stateText(server: TestServer, key?: string): Promise<string> {
  const r = await server.api('/api/connection', { key });
  const body = (await r.json()) as { current: { state: string } };
  return body.current.state;
}

/**
 * POST /api/connection connect to VIRTUAL (as clients do), then wait until it is Operational and the start-up
 * dialogue (M115, capabilities, M21, first report) is done. Throws unless the connect answers 204.
 */
export async function connectVirtual(server: TestServer, opts: { key?: string; printerProfile?: string } = {}): Promise<void> {
  const json: Record<string, unknown> = { command: 'connect', port: 'VIRTUAL', baudrate: 115200 };
  if (opts.printerProfile) json.printerProfile = opts.printerProfile;
  const r = await server.api('/api/connection', { method: 'POST', json, key: opts.key });
  await r.arrayBuffer();
  if (r.status !== 204) throw new Error(`connect answered ${r.status}, not 204`);
  await waitFor('Operational', async () => (await stateText(server, opts.key)) === 'Operational');
  await waitFor('firmware info', () => server.printer.firmwareName() !== '');
  // Operational comes before the first temperature report has reached the main thread (the link thread sends in
  // batches); clients' first poll after connect reads temperatures, as the compat tests do.
  await waitFor('first temperature report', () => 'tool0' in server.printer.temperatures());
}

/** A server whose virtual printer is connected and Operational (`baseDir`: an existing one, kept afterwards). */
export async function connectedServer(t: TestContext, settings: Record<string, unknown> = {}, opts: { baseDir?: string } = {}): Promise<TestServer> {
  const server = await startTestServer(t, { ...opts, settings: { ...FAST_PRINTER, ...settings } });
  await connectVirtual(server);
  return server;
}
