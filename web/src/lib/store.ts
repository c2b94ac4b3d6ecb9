// Client-side state: who is logged in, the printer state from the push channel, temperatures, terminal lines, settings,
// files and pending app-key requests, as signals the components read.
import { at } from './base.ts';
import { signal, computed } from '@preact/signals';
import { get, post, messageOf, whenDenied } from './api.ts';
import { PushClient } from './push.ts';
import { newestWins } from './newest-wins.ts';
import { printEnded } from './notifications.ts';
import type {
  AppKeyRequest, ConnectionInfo, CurrentUser, FilesResponse, LoginResponse, PrinterProfile, PrinterState, Progress,
  JobInfo, Settings, StatePayload, TempPoint, Marking,
} from './types.ts';

const OFFLINE: PrinterState = {
  text: 'Offline',
  flags: { operational: false, printing: false, cancelling: false, pausing: false, closedOrError: true, error: false, paused: false, ready: false, sdReady: false },
};

export const login = signal<LoginResponse | null>(null);
export const currentUser = signal<CurrentUser | null>(null);
/**
 * The page's link to the server, which the header, the overlay and the disabled controls follow: `connecting` before
 * the first greeting, `reconnecting` right after the socket dropped, `offline` once a retry failed too, `expired` when
 * the server is back but the login is gone and cannot be renewed silently (no remember-me cookie).
 */
export type LinkState = 'connecting' | 'online' | 'reconnecting' | 'offline' | 'expired';
export const link = signal<LinkState>('connecting');
/** Who was logged in when the login expired (the re-login form offers the name). */
export const expiredUser = signal<string | null>(null);
export const pushOnline = computed(() => link.value === 'online');
export const printerState = signal<PrinterState>(OFFLINE);
export const job = signal<JobInfo | null>(null);
export const progress = signal<Progress | null>(null);
export const currentZ = signal<number | null>(null);
export const busyFiles = signal<{ origin: string; path: string }[]>([]);
/** Fraction done of local files being analysed (from the server's analysisProgress messages), by path. */
export const analysisProgress = signal<Record<string, number>>({});
export const settings = signal<Settings | null>(null);
export const connection = signal<ConnectionInfo | null>(null);
export const profiles = signal<Record<string, PrinterProfile>>({});
export const files = signal<FilesResponse | null>(null);
export const appKeyRequests = signal<AppKeyRequest[]>([]);
export const notices = signal<{ id: number; text: string; kind: 'error' | 'info' }[]>([]);
/** Ticks when a print ends (the history page reloads) or a timelapse changes (the timelapse page reloads). */
export const historyVersion = signal(0);
export const timelapseVersion = signal(0);
/** Bumped by the events that change the offer to resume an interrupted print (the recovery panel reloads it). */
export const recoveryVersion = signal(0);
const RECOVERY_EVENTS = new Set(['PrintRecoveryAvailable', 'PrintRecovered', 'PrintStarted', 'PrintDone', 'PrintFailed', 'Connected']);
/** Percent of the running timelapse render, null when none runs. */
export const renderProgress = signal<number | null>(null);
/** The running slice job's progress, from the push channel's slicingProgress messages. */
export const slicingProgress = signal<{ source_path: string; progress: number } | null>(null);
/** How the last print this page saw ended, so the job panel does not show a stopped print's time left as live. */
export const lastOutcome = signal<'done' | 'cancelled' | 'failed' | null>(null);
/**
 * The running print's layer and height from the layer progress push (DisplayLayerProgress's payload, src/layer-progress)
 * or its /values on load; null until either has been seen.
 */
export interface LayerInfo { current: number | null; total: number | null; height: number | null; totalHeight: number | null; feedrate: number | null; fan: string | null }
export const layerInfo = signal<LayerInfo | null>(null);
/**
 * The speed (M220) and flow (M221) factors in percent, followed from the `Send:` lines of the terminal log (what the
 * firmware was told, from the file or a client); null until one was seen (the firmware's default is 100 %).
 */
export const factors = signal<{ speed: number | null; flow: number | null }>({ speed: null, flow: null });
/** File chosen for the G-code preview. */
export const previewPath = signal<string | null>(null);

/** Temperature samples, kept outside signals (thousands of points); `tempsVersion` ticks when they change. */
export const temps: TempPoint[] = [];
export const markings = signal<Marking[]>([]);
export const tempsVersion = signal(0);
/** Terminal lines, likewise. */
export const terminal: string[] = [];
export const terminalVersion = signal(0);
const TERMINAL_MAX = 2000;

export const userName = computed(() => currentUser.value?.name ?? login.value?.name ?? null);

/** Effective permission check; ADMIN implies everything (also plugin permissions). */
export function can(permission: string): boolean {
  const perms = currentUser.value?.permissions ?? [];
  return perms.includes('ADMIN') || perms.includes(permission);
}

export const currentProfile = computed<PrinterProfile | undefined>(() => {
  const all = Object.values(profiles.value);
  const id = connection.value?.current.printerProfile;
  return all.find((p) => p.id === id) ?? all.find((p) => p.current) ?? all.find((p) => p.default) ?? all[0];
});

let noticeId = 0;
export function notify(text: string, kind: 'error' | 'info' = 'info'): void {
  const id = ++noticeId;
  // A few at a time: a burst of saves must not cover the page.
  notices.value = [...notices.value.slice(-2), { id, text, kind }];
  setTimeout(() => dismiss(id), kind === 'error' ? 8000 : 6000);
}
export function dismiss(id: number): void {
  notices.value = notices.value.filter((n) => n.id !== id);
}

/** Runs an API action, turning failures into a visible notice. Returns false on failure. */
export async function attempt(what: string, fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (err) {
    notify(`${what}: ${messageOf(err)}`, 'error');
    return false;
  }
}

// ---- loading from the API ----


const fetchSettings = newestWins(() => get<Settings>('/api/settings'), (v) => { settings.value = v; });
export async function loadSettings(): Promise<void> {
  if (can('SETTINGS_READ')) await fetchSettings();
}

const fetchConnection = newestWins(() => get<ConnectionInfo>('/api/connection'), (v) => { connection.value = v; });
export async function loadConnection(): Promise<void> {
  if (can('STATUS')) await fetchConnection();
}

const fetchProfiles = newestWins(() => get<{ profiles: Record<string, PrinterProfile> }>('/api/printerprofiles'),
  (res) => { profiles.value = res.profiles ?? {}; });
export async function loadProfiles(): Promise<void> {
  if (can('CONNECTION')) await fetchProfiles();
}

// A slow listing started before a change must not overwrite a quick one started after it (a new folder vanished).
// `force` makes the server ask the printer for its card listing (M20), so only a user's explicit refresh sets it: the
// push events that trigger the other reloads must never cost the printer a line (a force on UpdatedFiles looped).
const fetchFiles = newestWins((force: boolean) => get<FilesResponse>(`/api/files?recursive=true${force ? '&force=true' : ''}`),
  (v) => { files.value = v; });
export async function loadFiles(force = false): Promise<void> {
  if (can('FILES_LIST')) await fetchFiles(force);
}

export async function loadPendingAppKeys(): Promise<void> {
  if (!can('PLUGIN_APPKEYS_GRANT')) return;
  const res = await get<{ pending?: Record<string, { app_id: string; user_id: string | null; user_token: string }> }>('/api/plugin/appkeys');
  for (const p of Object.values(res.pending ?? {})) addAppKeyRequest({ app_name: p.app_id, user_id: p.user_id, user_token: p.user_token });
}

const quiet = (p: Promise<unknown>) => p.catch(() => undefined);

let filesTimer: ReturnType<typeof setTimeout> | undefined;
function reloadFilesSoon(): void {
  clearTimeout(filesTimer);
  filesTimer = setTimeout(() => void quiet(loadFiles()), 250);
}
let connTimer: ReturnType<typeof setTimeout> | undefined;
function reloadConnectionSoon(): void {
  clearTimeout(connTimer);
  connTimer = setTimeout(() => void quiet(loadConnection()), 250);
}

// ---- session ----

/** Passive login: picks up an existing session (or remember-me cookie) and tells who we are. */
export async function refreshSession(): Promise<boolean> {
  const res = await post<LoginResponse>('/api/login', { passive: true });
  login.value = res.name ? res : null;
  currentUser.value = await get<CurrentUser>('/api/currentuser');
  return !!res.name;
}

export async function logout(): Promise<void> {
  push?.stop();
  await quiet(post('/api/logout'));
  location.href = at('/login');
}

// ---- push handling ----

function applyState(p: Partial<StatePayload>, full: boolean): void {
  if (p.state) printerState.value = p.state;
  if (p.job) job.value = p.job;
  if (p.progress) progress.value = p.progress;
  if (p.currentZ !== undefined) currentZ.value = p.currentZ;
  if (p.busyFiles) busyFiles.value = p.busyFiles;
  if (p.markings) markings.value = p.markings;
  if (full) {
    temps.length = 0;
    terminal.length = 0;
  }
  if (p.temps?.length || full) {
    for (const t of p.temps ?? []) temps.push(t);
    const cutoffMin = settings.value?.temperature?.cutoff ?? 30;
    const oldest = (temps[temps.length - 1]?.time ?? 0) - cutoffMin * 60;
    let drop = 0;
    while (drop < temps.length && temps[drop].time < oldest) drop++;
    if (drop) temps.splice(0, drop);
    tempsVersion.value++;
  }
  if (p.logs?.length || full) {
    followFactors(p.logs ?? []);
    for (const l of p.logs ?? []) terminal.push(l);
    if (terminal.length > TERMINAL_MAX) terminal.splice(0, terminal.length - TERMINAL_MAX);
    terminalVersion.value++;
  }
}

const FACTOR = /^Send: (?:N\d+ )?M22([01])\b[^;*]*?\bS(\d+(?:\.\d+)?)/i;
function followFactors(lines: string[]): void {
  let { speed, flow } = factors.value;
  for (const l of lines) {
    if (l.charCodeAt(6) !== 77 && l.charCodeAt(6) !== 78 && l.charCodeAt(6) !== 109) continue;
    const m = FACTOR.exec(l);
    if (!m) continue;
    if (m[1] === '0') speed = Number(m[2]);
    else flow = Number(m[2]);
  }
  if (speed !== factors.value.speed || flow !== factors.value.flow) factors.value = { speed, flow };
}

const num = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? parseFloat(v) : NaN;
  return Number.isFinite(n) ? n : null;
};
/** The plugin's push payload (flat) or its /values (nested) as one shape; "-" means unknown. */
function layerFrom(v: Record<string, unknown>): LayerInfo {
  const layer = (v.layer ?? {}) as Record<string, unknown>;
  const height = (v.height ?? {}) as Record<string, unknown>;
  const fan = v.fanspeed ?? v.fanSpeed;
  return {
    current: num(v.currentLayer ?? layer.current), total: num(v.totalLayer ?? layer.total),
    height: num(v.currentHeight ?? height.current), totalHeight: num(v.totalHeight ?? height.total),
    feedrate: num(v.feedrate), fan: typeof fan === 'string' && fan !== '-' ? fan : null,
  };
}

export async function loadLayerInfo(): Promise<void> {
  if (!can('STATUS')) return;
  layerInfo.value = layerFrom(await get<Record<string, unknown>>('/plugin/DisplayLayerProgress/values'));
}

/**
 * The newest print of the history (its file and how it ended), so a reload does not forget the last result (the push
 * tells of an end only as it happens); the status card shows it when it is the selected file's and nothing prints.
 */
export const lastPrinted = signal<{ path: string; origin: string; result: 'success' | 'failed' | 'cancelled' } | null>(null);
export async function loadLastPrinted(): Promise<void> {
  if (!can('FILES_LIST')) return;
  const { prints } = await get<{ prints: { path: string; origin: string; result: 'success' | 'failed' | 'cancelled' }[] }>('/plugin/gantry/history');
  const last = prints[prints.length - 1];
  lastPrinted.value = last ? { path: last.path, origin: last.origin, result: last.result } : null;
}

function addAppKeyRequest(r: AppKeyRequest): void {
  const me = userName.value;
  if (r.user_id && r.user_id !== me) return;
  if (appKeyRequests.value.some((x) => x.user_token === r.user_token)) return;
  appKeyRequests.value = [...appKeyRequests.value, r];
}

// The events after which the listing differs; the end of a print changes `prints` and comes as MetadataStatisticsUpdated.
const FILE_EVENTS = new Set(['UpdatedFiles', 'FileAdded', 'FileRemoved', 'FolderAdded', 'FolderRemoved', 'FileMoved',
  'MetadataAnalysisFinished', 'MetadataStatisticsUpdated', 'TransferDone']);
const TIMELAPSE_EVENTS = new Set(['MovieRendering', 'MovieDone', 'MovieFailed', 'PostRollStart']);
const CONNECTION_EVENTS = new Set(['Connected', 'Disconnected', 'Connecting', 'PrinterStateChanged', 'Error']);
const PROFILE_EVENTS = new Set(['PrinterProfileAdded', 'PrinterProfileModified', 'PrinterProfileDeleted']);

function onPush(type: string, payload: unknown): void {
  switch (type) {
    case 'history':
      applyState(payload as StatePayload, true);
      break;
    case 'current':
      applyState(payload as StatePayload, false);
      break;
    case 'event': {
      const ev = payload as { type: string; payload: Record<string, unknown> | null };
      if (FILE_EVENTS.has(ev.type)) reloadFilesSoon();
      if (ev.type === 'MetadataAnalysisFinished' && typeof ev.payload?.path === 'string') {
        const { [ev.payload.path]: _done, ...rest } = analysisProgress.value;
        analysisProgress.value = rest;
      }
      if (CONNECTION_EVENTS.has(ev.type)) reloadConnectionSoon();
      if (PROFILE_EVENTS.has(ev.type)) void quiet(loadProfiles());
      if (ev.type === 'SettingsUpdated') void quiet(loadSettings());
      if (RECOVERY_EVENTS.has(ev.type)) recoveryVersion.value++;
      if (TIMELAPSE_EVENTS.has(ev.type)) {
        timelapseVersion.value++;
        if (ev.type !== 'MovieRendering') renderProgress.value = null;
      }
      if (ev.type === 'SlicingDone' || ev.type === 'SlicingFailed' || ev.type === 'SlicingCancelled') slicingProgress.value = null;
      if (ev.type.startsWith('Print')) {
        if (ev.type !== 'PrintStarted') historyVersion.value++;
        printEnded(ev.type, ev.payload, notify);
        if (ev.type === 'PrintStarted') lastPrinted.value = null;
        lastOutcome.value = ev.type === 'PrintStarted' ? null
          : ev.type === 'PrintDone' ? 'done' : ev.type === 'PrintCancelled' ? 'cancelled'
          : ev.type === 'PrintFailed' && ev.payload?.reason !== 'cancelled' ? 'failed' : lastOutcome.value;
      }
      if (ev.type === 'Error' && ev.payload?.error) notify(`Printer error: ${String(ev.payload.error)}`, 'error');
      break;
    }
    case 'renderProgress':
      renderProgress.value = Number((payload as { progress?: number })?.progress ?? 0);
      break;
    case 'slicingProgress':
      slicingProgress.value = payload as { source_path: string; progress: number };
      break;
    case 'plugin': {
      const msg = payload as { plugin: string; data: { type?: string } & Partial<AppKeyRequest> };
      if (msg.plugin === 'DisplayLayerProgress-websocket-payload') {
        layerInfo.value = layerFrom(msg.data as Record<string, unknown>);
        break;
      }
      if (msg.plugin === 'gantry' && msg.data.type === 'analysisProgress') {
        const { path, progress: fraction } = msg.data as unknown as { path: string; progress: number };
        analysisProgress.value = { ...analysisProgress.value, [path]: fraction };
        break;
      }
      if (msg.plugin !== 'appkeys') break;
      if (msg.data.type === 'request_access' && msg.data.user_token && can('PLUGIN_APPKEYS_GRANT')) {
        addAppKeyRequest({ app_name: msg.data.app_name ?? 'An application', user_token: msg.data.user_token, user_id: msg.data.user_id ?? null });
      } else if (msg.data.type === 'end_request') {
        appKeyRequests.value = appKeyRequests.value.filter((r) => r.user_token !== msg.data.user_token);
      }
      break;
    }
    case 'reauthRequired': {
      const reason = (payload as { reason?: string })?.reason;
      const before = userName.value;
      void refreshSession().then((ok) => {
        if (ok) void push?.reauth();
        else if (reason !== 'modified') expire(before);
      });
      break;
    }
  }
}

let push: PushClient | undefined;

/**
 * The login is gone (logged out in another tab, the session ended on the server): the overlay asks for the password
 * in place and the push channel stops meanwhile, so nothing on the page streams on as if it were still live.
 */
function expire(user: string | null): void {
  if (link.value === 'expired') return;
  expiredUser.value = user;
  link.value = 'expired';
  push?.stop();
}

let checking: Promise<void> | undefined;
/** A 401/403 from an API call: expired only when the passive login says nobody is logged in any more. */
function denied(): void {
  if (!userName.value && !expiredUser.value) return;
  const before = userName.value;
  checking ??= refreshSession().then((ok) => { if (!ok) expire(before); }, () => undefined).finally(() => { checking = undefined; });
}
whenDenied(denied);

export function startPush(): void {
  let user: string | null = userName.value;
  push = new PushClient({
    // A passive login per socket connection: after a server restart the old session id would be stale, and the
    // remember-me cookie (when there is one) renews it without the user noticing.
    credentials: async () => {
      const ok = await refreshSession().catch(() => true);
      // The session is gone (server restarted without remember-me, or logged out elsewhere): ask in place, keeping
      // the page, rather than throwing the user out to the login page.
      if (!ok && user) {
        expire(user);
        return null;
      }
      user = userName.value;
      const l = login.value;
      return l?.name && l.session ? `${l.name}:${l.session}` : null;
    },
    onMessage: onPush,
    onStatus: (up, failures) => {
      const was = link.value;
      if (up) {
        if (was === 'expired') return;
        link.value = 'online';
        // Whatever changed while the page was cut off (files, settings, the connection) is loaded afresh; the
        // greeting's history message replaces the temperatures and the terminal.
        if (was !== 'connecting') void loadAll();
      } else if (was !== 'expired') {
        link.value = failures > 0 ? 'offline' : 'reconnecting';
      }
    },
  });
  push.start();
  addEventListener('online', () => push?.retryNow());
  document.addEventListener('visibilitychange', () => { if (!document.hidden) push?.retryNow(); });
}

/** Logs in again from the "login expired" overlay, keeping the page as it is. */
export async function relogin(user: string, pass: string, remember: boolean): Promise<void> {
  await post<LoginResponse>('/api/login', { user, pass, remember });
  await refreshSession();
  link.value = 'connecting';
  // The socket was stopped while the login was gone: a fresh one greets, sends the full state and logs in.
  push?.start();
  await loadAll();
}

/** Asks the push client to try the server now instead of waiting out its back-off. */
export function retryNow(): void {
  push?.retryNow();
}

/** Loads everything the panels need after login; each part fails on its own (missing permission or endpoint). */
export async function loadAll(): Promise<void> {
  await Promise.all([quiet(loadSettings()), quiet(loadConnection()), quiet(loadProfiles()), quiet(loadFiles()), quiet(loadPendingAppKeys()),
    quiet(loadLayerInfo()), quiet(loadLastPrinted())]);
}
