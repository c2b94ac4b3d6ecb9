// Test helper: a farm printer seen as its own OctoPrint (the compat sequences' TestServer), through its own port or
// through /printer/NAME/ on the main port; the users, keys and library are the farm's.
import type { TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/** The farm's second printer in the compat sequences: no port of its own connects it, the sequences connect VIRTUAL. */
export const FARM_PRINTER = 'two';

export async function printerView(s: TestServer, settings: Record<string, unknown>, via: 'prefix' | 'port'): Promise<TestServer> {
  const unit = s.farm.get(FARM_PRINTER);
  if (!unit) throw new Error(`no printer ${FARM_PRINTER} in the farm`);
  // The sequence's settings apply to the printer it talks to, as to the server it would have started alone.
  if (Object.keys(settings).length > 0) await unit.config.patch(settings);
  let url = `${s.url}/printer/${FARM_PRINTER}`;
  if (via === 'port') {
    const port = await waitFor('its own port', () => s.farmHost.views().find((v) => v.name === FARM_PRINTER)?.httpPort ?? undefined);
    url = `http://127.0.0.1:${port}`;
  }
  return {
    ...s, url, config: unit.config, printer: unit.printer, printerProfiles: unit.profiles, events: unit.events, timelapse: unit.timelapse, paths: { ...s.paths, ...unit.paths, uploads: s.paths.uploads },
    api(path, init = {}) {
      const headers = new Headers(init.headers);
      const key = init.key === undefined ? s.apiKey : init.key;
      if (key !== null && !headers.has('X-Api-Key')) headers.set('X-Api-Key', key);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('Content-Type', 'application/json');
        body = JSON.stringify(init.json);
      }
      return fetch(url + path, { ...init, headers, body });
    },
  };
}
