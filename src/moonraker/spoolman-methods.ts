// Moonraker's `[spoolman]` component over Gantry's Spoolman client (docs/reference/plugins.md §5.4): the active spool
// (`server.spoolman.get_spool_id`/`post_spool_id`), `server.spoolman.status`, `server.spoolman.proxy`, and the
// notifications `notify_active_spool_set` and `notify_spoolman_status_changed`.
import type { EventBus } from '../core/event-bus.ts';
import type { Plain } from '../core/plain.ts';
import type { SpoolService } from '../spools/spool-service.ts';
import { RpcError, badParam } from './rpc-errors.ts';

type Add = (name: string, need: string, run: (params: Plain) => unknown) => void;

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

export function registerSpoolmanMethods(add: Add, spools: SpoolService): void {
  // Moonraker's single active spool is tool 0's.
  add('server.spoolman.get_spool_id', 'STATUS', () => ({ spool_id: spools.activeSpools()['0'] ?? null }));
  add('server.spoolman.post_spool_id', 'CONTROL', async (p) => {
    const raw = p.spool_id;
    if (raw !== null && raw !== undefined && !(typeof raw === 'number' && Number.isInteger(raw) && raw > 0) && !(typeof raw === 'string' && /^\d{1,9}$/.test(raw))) {
      throw badParam('spool_id must be a spool id or null');
    }
    const id = raw === null || raw === undefined ? null : Number(raw);
    await spools.setActive(0, id, 'moonraker');
    return { spool_id: id };
  });
  add('server.spoolman.status', 'STATUS', () => {
    const s = spools.status();
    return { spoolman_connected: s.spoolman_connected, pending_reports: s.pending_reports, spool_id: s.active['0'] ?? null };
  });
  add('server.spoolman.proxy', 'CONTROL', async (p) => {
    const method = String(p.request_method ?? 'GET').toUpperCase();
    if (!METHODS.has(method)) throw badParam(`request_method ${method.slice(0, 20)} is not allowed`);
    if (typeof p.path !== 'string') throw badParam('path must be a string like /v1/spool');
    const query = typeof p.query === 'string' ? p.query : undefined;
    // Not set up, the component is absent (Moonraker registers no spoolman endpoints then): 404, a client's error. Set
    // up but unreachable, 503: the upstream is down, which no retry of the same request by the client can fix now.
    if (!spools.enabled()) throw new RpcError(404, 'Spoolman is not set up (plugins.spoolman.server is empty)');
    const r = await spools.proxy(method, p.path, p.body ?? undefined, query);
    if (r === null) throw new RpcError(503, 'Spoolman server not connected');
    const ok = r.status >= 200 && r.status < 300;
    const message = r.body && typeof r.body === 'object' && typeof (r.body as { message?: unknown }).message === 'string' ? (r.body as { message: string }).message : `HTTP ${r.status}`;
    if (p.use_v2_response === true || p.use_v2_response === 'true') {
      return { response: ok ? r.body : null, response_headers: ok ? r.headers : null, error: ok ? null : { status_code: r.status, message } };
    }
    if (!ok) throw new RpcError(r.status, message);
    return r.body;
  });
}

/** Spoolman's changes as Moonraker notifies them. */
export function spoolmanNotifications(events: EventBus, owner: string, broadcast: (method: string, params?: unknown[]) => void): void {
  events.on(owner, 'plugin_spoolman_active_spool_set', (p) => { if (p.tool === 0 || p.tool === undefined) broadcast('notify_active_spool_set', [{ spool_id: p.spool_id ?? null }]); });
  events.on(owner, 'plugin_spoolman_status_changed', (p) => broadcast('notify_spoolman_status_changed', [{ spoolman_connected: p.spoolman_connected === true }]));
}
