// Renders the pending confirmation/prompt dialog and the notices (errors, confirmations) in a corner.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
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
  const [problem, setProblem] = useState<string | undefined>();
  const okRef = useRef<HTMLButtonElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  // Before paint, so a key pressed the moment the dialog appears reaches it and not the page behind.
  useLayoutEffect(() => {
    (d.input !== undefined ? inputRef.current : d.danger ? cancelRef.current : okRef.current)?.focus();
  }, [d]);
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      closeDialog(null);
    } else if (e.key === 'Tab') {
      // The focus stays inside the dialog while it is open.
      const items = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLElement>('input,button')];
      const i = items.indexOf(document.activeElement as HTMLElement);
      const next = e.shiftKey ? (i <= 0 ? items.length - 1 : i - 1) : (i + 1) % items.length;
      e.preventDefault();
      items[next]?.focus();
    }
  };
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-label={d.title} aria-describedby={`dlg-${d.id}`}
      onClick={(e) => e.target === e.currentTarget && closeDialog(null)}>
      <form class="dialog" aria-label={d.title} onKeyDown={onKey}
        onSubmit={(e) => {
          e.preventDefault();
          const wrong = d.input !== undefined ? d.check?.(value) : undefined;
          setProblem(wrong);
          if (wrong) inputRef.current?.focus();
          else closeDialog(d.input !== undefined ? value : '');
        }}>
        <h2>{d.title}</h2>
        <p id={`dlg-${d.id}`}>{d.text}</p>
        {d.input !== undefined && <input ref={inputRef} aria-label={d.title} type={(d.secret ? 'password' : 'text') as 'text'} value={value}
          aria-invalid={problem ? true : undefined} aria-describedby={problem ? `dlg-${d.id}-problem` : undefined}
          onInput={(e) => setValue(e.currentTarget.value)} />}
        {problem && <p class="field-error" id={`dlg-${d.id}-problem`} role="alert">{problem}</p>}
        <div class="buttons">
          <button ref={cancelRef} type="button" onClick={() => closeDialog(null)}>{d.cancel ?? 'Cancel'}</button>
          <button ref={okRef} type="submit" class={d.danger ? 'danger solid' : 'primary'}>{d.okLabel}</button>
        </div>
      </form>
    </div>
  );
}

export function Notices() {
  return (
    <div class="notices" role="status" aria-live="polite">
      {notices.value.map((n) => (
        <button key={n.id} type="button" class={`notice ${n.kind}`} title="Dismiss" onClick={() => dismiss(n.id)}>{n.text}</button>
      ))}
    </div>
  );
}
