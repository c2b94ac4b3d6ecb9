// Cancel one object (src/objects/, /api/plugin/cancelobject): the objects of the selected or printing file with a
// cancel button each (confirmed), and the click on an object's outline in the G-code preview (PreviewTab).
import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { get, post } from '../lib/api.ts';
import { confirmDialog } from '../lib/dialogs.ts';
import { attempt, can, job, printerState } from '../lib/store.ts';

export interface ObjectOutline {
  object: string; id: number; cancelled: boolean; ignore: boolean; polygon: [number, number][];
}

/** The selected file's objects and the one being printed (-1 none). */
export const objectOutlines = signal<{ path: string | null; objects: ObjectOutline[]; active: number }>({ path: null, objects: [], active: -1 });

export async function readObjects(): Promise<void> {
  try {
    const r = await get<{ objects: ObjectOutline[]; active: number }>('/api/plugin/cancelobject/outlines');
    objectOutlines.value = { path: job.value?.file?.path ?? null, objects: r.objects, active: r.active };
  } catch {
    objectOutlines.value = { path: null, objects: [], active: -1 };
  }
}

/** Asks, then cancels; true when it was cancelled. */
export async function cancelObject(o: ObjectOutline): Promise<boolean> {
  const left = objectOutlines.value.objects.filter((x) => !x.cancelled && !x.ignore && x.id !== o.id).length;
  const text = left === 0
    ? `"${o.object}" is the last object left: cancelling it cancels the print.`
    : `Stop printing "${o.object}"? The other objects go on; this cannot be undone.`;
  if (!(await confirmDialog('Cancel object', text, 'Cancel object', { danger: true }))) return false;
  const ok = await attempt('Cancel object', () => post('/api/plugin/cancelobject', { command: 'cancel', cancelled: o.id }));
  await readObjects();
  return ok;
}

export function CancelObjects() {
  const path = job.value?.file?.path ?? null;
  const f = printerState.value.flags;
  const printing = f.printing || f.paused || f.pausing;
  useEffect(() => {
    void readObjects();
    if (!printing) return;
    const t = setInterval(() => void readObjects(), 3000);
    return () => clearInterval(t);
  }, [path, printing]);
  const { objects, active } = objectOutlines.value;
  if (path === null || objects.length === 0) return null;
  return (
    <section class="panel" data-testid="cancel-objects">
      <h2>Objects</h2>
      <ul class="objects">
        {objects.map((o) => (
          <li key={o.id} data-testid="object-row" class={o.cancelled ? 'muted' : ''}>
            <span>{o.object}{o.id === active && printing ? ' (printing)' : ''}{o.cancelled ? ' (cancelled)' : ''}</span>
            {printing && can('CONTROL') && !o.cancelled && !o.ignore && (
              <button class="danger small" aria-label={`Cancel ${o.object}`} onClick={() => void cancelObject(o)}>Cancel</button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
