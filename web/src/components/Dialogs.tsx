// Renders the pending confirmation/prompt dialog and the notices (errors, confirmations) in a corner.
import { useEffect, useRef, useState } from 'preact/hooks';
import { dialog, closeDialog, type DialogRequest } from '../lib/dialogs.ts';
import { notices, dismiss } from '../lib/store.ts';

export function DialogHost() {
  const d = dialog.value;
  // Keyed by request so each dialog starts with its own initial value in the first render: setting it from an
  // effect left a moment in which typed text was overwritten by the initial value.
  return d ? <DialogForm key={d.id} d={d} /> : null;
}

function DialogForm({ d }: { d: DialogRequest }) {
  const [value, setValue] = useState(d.input ?? '');
  const okRef = useRef<HTMLButtonElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    (d.input !== undefined ? inputRef.current : okRef.current)?.focus();
  }, [d]);
  return (
    <div class="overlay" onClick={(e) => e.target === e.currentTarget && closeDialog(null)}>
      <form class="dialog" aria-label={d.title} onSubmit={(e) => { e.preventDefault(); closeDialog(d.input !== undefined ? value : ''); }}>
        <h2>{d.title}</h2>
        <p>{d.text}</p>
        {d.input !== undefined && <input ref={inputRef} value={value} onInput={(e) => setValue(e.currentTarget.value)} />}
        <div class="buttons">
          <button type="button" onClick={() => closeDialog(null)}>Cancel</button>
          <button ref={okRef} type="submit" class="primary">{d.okLabel}</button>
        </div>
      </form>
    </div>
  );
}

export function Notices() {
  return (
    <div class="notices" aria-live="polite">
      {notices.value.map((n) => (
        <div key={n.id} class={`notice ${n.kind}`} onClick={() => dismiss(n.id)}>{n.text}</div>
      ))}
    </div>
  );
}
