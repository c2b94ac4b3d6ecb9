// In-page confirmation and prompt dialogs (the browser's own would block the page and cannot be styled or tested well).
import { signal } from '@preact/signals';

export interface DialogOptions {
  /** The harmless choice's label ("Keep printing"); Escape and a click beside the dialog choose it. */
  cancel?: string;
  /** A destructive action: the harmless choice gets the focus, so Enter never destroys anything. */
  danger?: boolean;
  /** For a prompt: why a typed value cannot be taken (shown in the dialog, which stays open), or undefined. */
  check?: (value: string) => string | undefined;
  /** For a prompt: the value is a password (hidden as typed). */
  secret?: boolean;
}

export interface DialogRequest extends DialogOptions {
  /** Tells one request from the next, so a new dialog never inherits the previous one's typed text. */
  id: number;
  title: string;
  text: string;
  okLabel: string;
  /** When set, the dialog asks for a value with this initial text. */
  input?: string;
  /** Where the focus goes back to when the dialog closes. */
  returnFocus: Element | null;
  resolve(value: string | null): void;
}

export const dialog = signal<DialogRequest | null>(null);
let requests = 0;

function open(req: Omit<DialogRequest, 'id' | 'returnFocus'>): void {
  // A dialog opened while another is up answers the older one with "no" rather than leaving it hanging.
  dialog.value?.resolve(null);
  dialog.value = { ...req, id: ++requests, returnFocus: document.activeElement };
}

export function confirmDialog(title: string, text: string, okLabel = 'OK', opts: DialogOptions = {}): Promise<boolean> {
  return new Promise((resolve) => open({ title, text, okLabel, ...opts, resolve: (v) => resolve(v !== null) }));
}

export function promptDialog(title: string, text: string, initial: string, okLabel = 'OK', opts: DialogOptions = {}): Promise<string | null> {
  return new Promise((resolve) => open({ title, text, okLabel, ...opts, input: initial, resolve }));
}

export function closeDialog(value: string | null): void {
  const d = dialog.value;
  dialog.value = null;
  d?.resolve(value);
  if (d?.returnFocus instanceof HTMLElement && d.returnFocus.isConnected) d.returnFocus.focus();
}
