// Tells the user that a print ended (done, failed, cancelled): a notice in the page and, when the user allowed it, a
// notification from the browser that shows while the tab is in the background.
import { signal } from '@preact/signals';

const KEY = 'gantry.notify';
const supported = typeof Notification !== 'undefined';
export const desktopNotify = signal(supported && Notification.permission === 'granted' && localStorage.getItem(KEY) === '1');

export async function toggleDesktopNotify(): Promise<boolean> {
  if (!supported) return false;
  if (desktopNotify.value) {
    desktopNotify.value = false;
    localStorage.removeItem(KEY);
    return false;
  }
  const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
  desktopNotify.value = permission === 'granted';
  if (desktopNotify.value) localStorage.setItem(KEY, '1');
  return desktopNotify.value;
}

type Notify = (text: string, kind: 'error' | 'info') => void;

/** The message for a print-ending event, or null for other events. */
export function printEnded(type: string, payload: Record<string, unknown> | null, notify: Notify): void {
  const name = String(payload?.name ?? payload?.path ?? 'The print');
  let text: string;
  if (type === 'PrintDone') text = `Print finished: ${name}`;
  else if (type === 'PrintCancelled') text = `Print cancelled: ${name}`;
  // A cancel is followed by a PrintFailed with reason "cancelled": told once already.
  else if (type === 'PrintFailed' && payload?.reason !== 'cancelled') text = `Print failed: ${name}${payload?.error ? ` (${String(payload.error)})` : ''}`;
  else return;
  notify(text, type === 'PrintFailed' ? 'error' : 'info');
  if (desktopNotify.value && Notification.permission === 'granted') {
    try {
      new Notification('Gantry', { body: text, tag: 'gantry-print' });
    } catch {
      // Some browsers allow notifications only from a service worker; the in-page notice was shown already.
    }
  }
}
