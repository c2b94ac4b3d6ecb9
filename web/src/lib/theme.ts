// Light/dark theme: follows the system (prefers-color-scheme) unless the user picked one, remembered in this browser.
import { signal } from '@preact/signals';

export type Theme = 'auto' | 'light' | 'dark';
const KEY = 'gantry.theme';
const stored = (): Theme => { const v = localStorage.getItem(KEY); return v === 'light' || v === 'dark' ? v : 'auto'; };
export const theme = signal<Theme>(stored());

function apply(): void {
  const t = theme.value;
  if (t === 'auto') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = t;
}
apply();

/** auto → dark → light → auto. */
export function cycleTheme(): void {
  theme.value = theme.value === 'auto' ? 'dark' : theme.value === 'dark' ? 'light' : 'auto';
  if (theme.value === 'auto') localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, theme.value);
  apply();
}
