// In-page confirmation and prompt dialogs (the browser's own would block the page and cannot be styled or tested well).
import { signal } from '@preact/signals';

export interface DialogRequest {
  /** Tells one request from the next, so a new dialog never inherits the previous one's typed text. */
  id: number;
  title: string;
  text: string;
  okLabel: string;
  /** When set, the dialog asks for a value with this initial text. */
  input?: string;
  resolve(value: string | null): void;
}

export const dialog = signal<DialogRequest | null>(null);
let requests = 0;

export function confirmDialog(title: string, text: string, okLabel = 'OK'): Promise<boolean> {
  return new Promise((resolve) => {
    dialog.value = { id: ++requests, title, text, okLabel, resolve: (v) => resolve(v !== null) };
  });
}

export function promptDialog(title: string, text: string, initial: string, okLabel = 'OK'): Promise<string | null> {
  return new Promise((resolve) => {
    dialog.value = { id: ++requests, title, text, okLabel, input: initial, resolve };
  });
}

export function closeDialog(value: string | null): void {
  const d = dialog.value;
  dialog.value = null;
  d?.resolve(value);
}
