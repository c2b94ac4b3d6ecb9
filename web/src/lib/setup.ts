// The first-run setup wizard's state: whether it is open, and whether this login should see it (the account the first
// start created, until the wizard was finished or skipped; the server marks it `gantry.setup: pending`).
import { signal } from '@preact/signals';
import { patch } from './api.ts';
import { can, login, userName } from './store.ts';

export const setupOpen = signal(false);

/** True for the first start's admin while the server still marks the setup as pending. */
export function setupPending(): boolean {
  const mark = (login.value?.settings?.gantry as { setup?: string } | undefined)?.setup;
  return mark === 'pending' && can('ADMIN');
}

/** Closes the wizard and remembers how it ended, so it does not open again at the next login (Settings reopens it). */
export async function endSetup(how: 'done' | 'skipped'): Promise<void> {
  setupOpen.value = false;
  const me = userName.value;
  if (!me) return;
  await patch(`/api/access/users/${encodeURIComponent(me)}/settings`, { gantry: { setup: how } }).catch(() => undefined);
  if (login.value) login.value = { ...login.value, settings: { ...login.value.settings, gantry: { setup: how } } };
}
