// What the status card, the file lists and the tab show about a print: one estimate per file (the rule the server's
// job document follows), the file entry of the job, the finish clock time, and the progress in the tab's title and icon.
import { effect } from '@preact/signals';
import { at } from './base.ts';
import { connection, currentProfile, files, job, printerState, progress, settings } from './store.ts';
import type { FileEntry } from './types.ts';

export interface Estimate { seconds: number; source: 'previous prints' | 'file analysis' }

/**
 * A file's expected print time: the average of its earlier prints on this printer profile, else its analysis — the
 * same rule as the server's `job.estimatedPrintTime` (src/printer/job/job-bookkeeping.ts), so the file list and the job
 * no longer disagree (the list showed the analysis' 1m 00s, the job the average's 20 s).
 */
export function fileEstimate(e: FileEntry | undefined, profileId = connection.value?.current.printerProfile ?? currentProfile.value?.id): Estimate | null {
  if (!e) return null;
  const avg = profileId ? e.statistics?.averagePrintTime?.[profileId] : undefined;
  if (typeof avg === 'number' && avg > 0) return { seconds: avg, source: 'previous prints' };
  const a = e.gcodeAnalysis?.estimatedPrintTime;
  return typeof a === 'number' && a > 0 ? { seconds: a, source: 'file analysis' } : null;
}

/** The listing's entry of a file, by origin and path. */
export function findEntry(origin: string | null | undefined, path: string | null | undefined): FileEntry | undefined {
  if (!origin || !path) return undefined;
  const walk = (list: FileEntry[]): FileEntry | undefined => {
    for (const e of list) {
      if (e.type === 'folder') {
        const f = walk(e.children ?? []);
        if (f) return f;
      } else if (e.origin === origin && e.path === path) return e;
    }
    return undefined;
  };
  return walk(files.value?.files ?? []);
}

/** "14:32", or "Tue 09:10" when the print ends on another day. */
export function finishClock(secondsLeft: number, now = Date.now()): string {
  const end = new Date(now + secondsLeft * 1000);
  const hm = end.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return end.toDateString() === new Date(now).toDateString() ? hm : `${end.toLocaleDateString([], { weekday: 'short' })} ${hm}`;
}

export const isActive = () => {
  const f = printerState.value.flags;
  return f.printing || f.paused || f.pausing || f.cancelling;
};

/** The page's own icon with a progress ring around it while a print runs. */
function progressIcon(pct: number, paused: boolean): string {
  const r = 14;
  const c = 2 * Math.PI * r;
  const color = paused ? '#f59f00' : '#37b24d';
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><circle cx="16" cy="16" r="${r}" fill="#1f2937" stroke="#4b5563" stroke-width="4"/>`
    + `<circle cx="16" cy="16" r="${r}" fill="none" stroke="${color}" stroke-width="4" stroke-dasharray="${(c * pct) / 100} ${c}" transform="rotate(-90 16 16)"/>`
    + `<text x="16" y="20.5" font-size="12" font-family="sans-serif" font-weight="700" text-anchor="middle" fill="#fff">${Math.floor(pct)}</text></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

let iconLink: HTMLLinkElement | null = null;
function setIcon(href: string | null): void {
  if (!iconLink) {
    iconLink = document.querySelector<HTMLLinkElement>('link[rel~=icon]') ?? document.createElement('link');
    iconLink.rel = 'icon';
    if (!iconLink.parentNode) document.head.append(iconLink);
  }
  const want = href ?? at('/favicon.ico');
  if (iconLink.getAttribute('href') !== want) iconLink.setAttribute('href', want);
  iconLink.dataset.progress = href ? 'yes' : 'no';
}

/**
 * Keeps the tab's title and icon on the print: "37 % · benchy.gcode – Printer" while it runs, so a glance at the tab
 * strip tells how far it is. `stateText` is the header's state (also the link's state while the server is away).
 */
export function followInTab(stateText: () => string): () => void {
  return effect(() => {
    const name = settings.value?.appearance?.name;
    const state = stateText();
    const p = progress.value?.completion;
    const active = isActive();
    const file = job.value?.file;
    const tail = `${name ? `${name} – ` : ''}Gantry`;
    if (active && typeof p === 'number') {
      document.title = `${Math.floor(p)} % · ${file?.display || file?.name || state} – ${tail}`;
      setIcon(progressIcon(p, printerState.value.flags.paused || printerState.value.flags.pausing));
    } else {
      document.title = `${name ? `${name} – ` : ''}${state} – Gantry`;
      setIcon(null);
    }
  });
}
