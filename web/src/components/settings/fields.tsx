// Small labelled form fields shared by the settings sections.
import type { ComponentChildren } from 'preact';

export function Text({ label, value, onChange, disabled, type = 'text', placeholder }: {
  label: string; value: string; onChange(v: string): void; disabled?: boolean; type?: 'text' | 'number' | 'password' | 'url'; placeholder?: string;
}) {
  // Numbers may be fractional (0.4 mm nozzles, 1.75 mm filament): without step="any" the browser refuses them.
  return <label>{label}<input type={type as "text"} step={type === 'number' ? 'any' : undefined} value={value} placeholder={placeholder}
    disabled={disabled} onInput={(e) => onChange(e.currentTarget.value)} /></label>;
}

export function Check({ label, value, onChange, disabled }: { label: string; value: boolean; onChange(v: boolean): void; disabled?: boolean }) {
  return <label class="check"><input type="checkbox" checked={value} disabled={disabled} onChange={(e) => onChange(e.currentTarget.checked)} /> {label}</label>;
}

export function Section({ title, children, onSave, disabled }: { title: string; children: ComponentChildren; onSave?(): void; disabled?: boolean }) {
  return (
    <form class="section form" onSubmit={(e) => { e.preventDefault(); onSave?.(); }} aria-label={title}>
      <h3>{title}</h3>
      {children}
      {onSave && <div class="buttons"><button class="primary" type="submit" disabled={disabled}>Save</button></div>}
    </form>
  );
}
