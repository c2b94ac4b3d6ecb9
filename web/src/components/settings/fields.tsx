// Small labelled form fields shared by the settings sections, and the form that checks them before sending and puts
// each error (its own or the server's) on the field it is about.
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { signal } from '@preact/signals';
import { get, messageOf } from '../../lib/api.ts';

/** What the server's settings table says a field may hold (GET /plugin/gantry/settings-rules), by API path. */
export interface FieldRule { type?: string; min?: number; max?: number; required?: boolean }
export const fieldRules = signal<Record<string, FieldRule>>({});
let rulesAsked = false;
/** Asks once per page load; a failure leaves only the server's own check, which still names the field. */
function loadRules(): void {
  if (rulesAsked) return;
  rulesAsked = true;
  get<{ fields: Record<string, FieldRule> }>('/plugin/gantry/settings-rules').then((r) => { fieldRules.value = r.fields; }, () => { rulesAsked = false; });
}

/** Errors of the enclosing form by field name. */
const FormErrors = createContext<Record<string, string>>({});

/** The error the enclosing form holds for a field, or undefined. */
export function useFieldError(name: string): string | undefined {
  return useContext(FormErrors)[name];
}

/**
 * A labelled input. `name` is the field's settings path (`serial.timeoutConnection`): the form finds the field an error
 * names by it, and its bounds come from the server's rules for it (explicit min/max/required win).
 */
export function Text({ label, value, onChange, disabled, type = 'text', placeholder, name, min, max, required, step, minLength }: {
  label: string; value: string; onChange(v: string): void; disabled?: boolean; type?: 'text' | 'number' | 'password' | 'url'; placeholder?: string;
  name?: string; min?: number; max?: number; required?: boolean; step?: string; minLength?: number;
}) {
  const errors = useContext(FormErrors);
  const rule = name ? fieldRules.value[name] : undefined;
  const err = name ? errors[name] : undefined;
  const id = name ? `field-${name.replace(/[^\w-]/g, '-')}` : undefined;
  const number = type === 'number';
  // Numbers may be fractional (0.4 mm nozzles, 1.75 mm filament): without step="any" the browser refuses them.
  return (
    <label>{label}<input type={type as 'text'} name={name} step={number ? step ?? (rule?.type === 'integer' ? '1' : 'any') : undefined}
      minLength={minLength} min={number ? min ?? rule?.min : undefined} max={number ? max ?? rule?.max : undefined} required={required ?? rule?.required}
      data-label={label} value={value} placeholder={placeholder} disabled={disabled} aria-invalid={err ? true : undefined}
      aria-describedby={err ? `${id}-error` : undefined} onInput={(e) => onChange(e.currentTarget.value)} />
      {err && <span class="field-error" id={`${id}-error`}>{label}: {err}</span>}
    </label>
  );
}

export function Check({ label, value, onChange, disabled }: { label: string; value: boolean; onChange(v: boolean): void; disabled?: boolean }) {
  return <label class="check"><input type="checkbox" checked={value} disabled={disabled} onChange={(e) => onChange(e.currentTarget.checked)} /> {label}</label>;
}

type Named = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;
const fmt = (n: string) => String(Number(n));

/** Why a field's value does not pass its own bounds (the browser's constraint check, said in words), or ''. */
function localProblem(el: Named): string {
  // Checked by hand: the browser reports tooShort only for text a person typed, not for a value set by a script.
  const input0 = el as HTMLInputElement;
  if (input0.minLength > 0 && input0.value !== '' && [...input0.value].length < input0.minLength) return `must have at least ${input0.minLength} characters`;
  const v = el.validity;
  if (v.valid) return '';
  if (v.valueMissing) return 'enter a value';
  if (v.badInput) return 'must be a number';
  const input = el as HTMLInputElement;
  if (v.rangeUnderflow) return `must be at least ${fmt(input.min)}`;
  if (v.rangeOverflow) return `must be at most ${fmt(input.max)}`;
  if (v.stepMismatch) return 'must be a whole number';
  return el.validationMessage || 'is not valid';
}

/** The server's reason in words a person reads (the table's ">=" becomes "at least"). */
function reasonOf(message: string, name: string): string {
  const i = message.indexOf(name);
  let reason = i >= 0 ? message.slice(i + name.length).replace(/^[^:]*:\s*/, '').replace(/^ setting,?\s*/, '') : message;
  reason = reason.replace(/must be >= /, 'must be at least ').replace(/must be <= /, 'must be at most ');
  return reason.trim() || 'is not valid';
}

/** Errors a save may throw to point at fields itself (checks only the section knows, e.g. "give the preset a name"). */
export class FieldErrors extends Error {
  constructor(readonly fields: Record<string, string>) { super(Object.values(fields).join('; ')); }
}

/**
 * A form section. On Save it first checks every named field against its bounds (nothing is sent while one fails),
 * then runs `onSave`; when that throws, the error goes on the field whose name the message contains, else on the form.
 * Each attempt replaces the previous errors: nothing piles up, and no toast covers the page.
 */
export function Section({ title, children, onSave, disabled, saveLabel = 'Save', actions }: {
  title: string; children: ComponentChildren; onSave?(): unknown; disabled?: boolean; saveLabel?: string; actions?: ComponentChildren;
}) {
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(loadRules, []);
  const submit = async (form: HTMLFormElement) => {
    const named = [...form.elements].filter((el): el is Named => 'name' in el && !!(el as Named).name && !(el as Named).disabled);
    const local: Record<string, string> = {};
    for (const el of named) {
      const problem = localProblem(el);
      if (problem) local[el.name] = problem;
    }
    setFormError('');
    setErrors(local);
    if (Object.keys(local).length) return focusFirst(form);
    setBusy(true);
    try {
      await onSave?.();
    } catch (err) {
      if (err instanceof FieldErrors) {
        setErrors(err.fields);
        return focusFirst(form);
      }
      const message = messageOf(err);
      // The longest name first: `webcam.snapshotUrl` must not be taken for a field named `webcam.snapshot`.
      const hit = named.map((el) => el.name).sort((a, b) => b.length - a.length).find((n) => message.includes(n));
      if (hit) {
        setErrors({ [hit]: reasonOf(message, hit) });
        focusFirst(form);
      } else {
        setFormError(message);
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="section form" noValidate onSubmit={(e) => { e.preventDefault(); void submit(e.currentTarget); }} aria-label={title}>
      <h3>{title}</h3>
      <FormErrors.Provider value={errors}>{children}</FormErrors.Provider>
      {formError && <p class="error" role="alert" data-testid="form-error">{title}: {formError}</p>}
      {Object.keys(errors).length > 0 && (
        <p class="error" role="alert" data-testid="form-error">
          {Object.keys(errors).length === 1 ? 'One field needs' : `${Object.keys(errors).length} fields need`} a fix before saving.
        </p>
      )}
      {(onSave || actions) && <div class="buttons">{actions}{onSave && <button class="primary" type="submit" disabled={disabled || busy}>{saveLabel}</button>}</div>}
    </form>
  );
}

/** After the errors render, the first marked field takes the focus (a screen reader reads its label and error). */
function focusFirst(form: HTMLFormElement): void {
  requestAnimationFrame(() => form.querySelector<HTMLElement>('[aria-invalid=true]')?.focus());
}
