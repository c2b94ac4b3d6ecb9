// Renders the pending confirmation/prompt dialog and the notices (errors, confirmations) in a corner.
import { useEffect, useRef, useState } from 'preact/hooks';
import { dialog, closeDialog } from '../lib/dialogs.ts';
import { notices, dismiss } from '../lib/store.ts';

export function DialogHost() {
  const d = dialog.value;
  const [value, setValue] = useState('');
  const okRef = useRef<HTMLButtonElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (!d) return;
    setValue(d.input ?? '');
    setTimeout(() => (d.input !== undefined ? inputRef.current?.focus() : okRef.current?.focus()), 0);
  }, [d]);
  if (!d) return null;
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
