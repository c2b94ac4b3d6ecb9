// The header's printer power controls (src/power/, src/layer-progress/): the power switch (PSU Control's API, an off
// while printing or heating asked for and then forced), preheat from the selected file, and the emergency stop (M112,
// confirmed; always shown while printing).
import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { ApiError, get, post } from '../lib/api.ts';
import { confirmDialog } from '../lib/dialogs.ts';
import { attempt, can, job, printerState } from '../lib/store.ts';

const psuOn = signal<boolean | null>(null);

async function readPower(): Promise<void> {
  try {
    psuOn.value = (await get<{ isPSUOn: boolean }>('/api/plugin/psucontrol')).isPSUOn;
  } catch {
    psuOn.value = null;
  }
}

async function switchPower(): Promise<void> {
  if (psuOn.value) {
    if (!(await confirmDialog('Power off', 'Switch the printer\'s power off?', 'Power off'))) return;
    try {
      await post('/api/plugin/psucontrol', { command: 'turnPSUOff' });
    } catch (err) {
      // 409: printing or heating; the server says which. Asked once more, then forced.
      if (!(err instanceof ApiError) || err.status !== 409) throw err;
      if (!(await confirmDialog('Power off anyway?', `${err.message}. Switch off anyway?`, 'Force power off', { danger: true }))) return;
      await post('/api/plugin/psucontrol', { command: 'turnPSUOff', force: true });
    }
  } else {
    await post('/api/plugin/psucontrol', { command: 'turnPSUOn' });
  }
  await readPower();
}

export function PowerSwitch() {
  useEffect(() => {
    void readPower();
    const timer = setInterval(() => void readPower(), 5000);
    return () => clearInterval(timer);
  }, []);
  if (psuOn.value === null || !can('PLUGIN_PSUCONTROL_CONTROL')) return null;
  return (
    <button class={`icon text power ${psuOn.value ? 'on' : 'off'}`} data-testid="power-switch" aria-pressed={psuOn.value}
      title={psuOn.value ? 'Printer power is on' : 'Printer power is off'} onClick={() => void attempt('Power', switchPower)}>
      ⏻ {psuOn.value ? 'On' : 'Off'}
    </button>
  );
}

export function PreheatButton() {
  const file = job.value?.file;
  if (!can('CONTROL') || !file?.path || file.origin !== 'local' || !printerState.value.flags.operational || printerState.value.flags.printing) return null;
  return (
    <button class="icon text" data-testid="preheat" title={`Heat to the first layer's temperatures of ${file.path}`}
      onClick={() => void attempt('Preheat', () => post('/api/plugin/preheat', { command: 'preheat' }))}>Preheat</button>
  );
}

export function EmergencyStop() {
  const f = printerState.value.flags;
  if (!can('CONTROL') || !f.operational) return null;
  const stop = async () => {
    if (!(await confirmDialog('Emergency stop', 'Send M112? The printer halts at once, heaters off; it must be reset and reconnected.', 'Stop now', { danger: true }))) return;
    await post('/api/printer/command', { commands: ['M112'] });
  };
  return <button class={`icon text estop${f.printing ? ' printing' : ''}`} data-testid="emergency-stop" onClick={() => void attempt('Emergency stop', stop)}>E-stop</button>;
}

/** The mount point: one element in the header. */
export function PowerControls() {
  return <><PreheatButton /><PowerSwitch /><EmergencyStop /></>;
}
