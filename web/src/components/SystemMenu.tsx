// The header's System menu: the server's system commands (restart, reboot, shutdown, custom ones) behind a confirmation.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post } from '../lib/api.ts';
import { confirmDialog } from '../lib/dialogs.ts';
import { attempt, can, notify } from '../lib/store.ts';
import { desktopNotify, toggleDesktopNotify } from '../lib/notifications.ts';
import type { SystemCommand } from '../lib/types.ts';

export function SystemMenu() {
  const [open, setOpen] = useState(false);
  const [commands, setCommands] = useState<SystemCommand[] | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (!open) return;
    if (can('SYSTEM')) {
      get<{ core: SystemCommand[]; custom: SystemCommand[] }>('/api/system/commands')
        .then((r) => setCommands([...r.core, ...r.custom].filter((c) => c.action !== 'divider'))).catch(() => setCommands([]));
    }
    box.current?.querySelector<HTMLElement>('[role=menuitem]')?.focus();
    const away = (e: Event) => { if (!box.current?.contains(e.target as Node)) setOpen(false); };
    document.addEventListener('pointerdown', away);
    return () => document.removeEventListener('pointerdown', away);
  }, [open]);

  const close = () => { setOpen(false); button.current?.focus(); };
  const run = async (c: SystemCommand) => {
    close();
    if (!(await confirmDialog(c.name, c.confirm ?? `Run "${c.name}" on the server?`, c.name, { cancel: 'Do nothing', danger: true }))) return;
    if (await attempt(c.name, () => post(`/api/system/commands/${c.source}/${encodeURIComponent(c.action)}`))) notify(`${c.name}: started`);
  };
  const onKey = (e: KeyboardEvent) => {
    const items = [...(box.current?.querySelectorAll<HTMLElement>('[role=menuitem]') ?? [])];
    const i = items.indexOf(document.activeElement as HTMLElement);
    if (e.key === 'Escape') { e.preventDefault(); close(); }
    else if (e.key === 'ArrowDown') { e.preventDefault(); items[(i + 1) % items.length]?.focus(); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); items[(i - 1 + items.length) % items.length]?.focus(); }
  };

  return (
    <div class="menu-box" ref={box} onKeyDown={onKey}>
      <button ref={button} class="icon" aria-haspopup="menu" aria-expanded={open} aria-controls="system-menu" onClick={() => setOpen(!open)} title="System">⏻<span class="sr">System</span></button>
      {open && (
        <div class="menu" role="menu" id="system-menu" aria-label="System">
          {typeof Notification !== 'undefined' && (
            <button role="menuitem" onClick={() => void toggleDesktopNotify().then((on) => notify(on ? 'Desktop notifications on' : 'Desktop notifications off'))}>
              {desktopNotify.value ? 'Turn off desktop notifications' : 'Notify me when prints end'}
            </button>
          )}
          {can('SYSTEM') && commands === null && <span class="muted">Loading…</span>}
          {commands?.length === 0 && <span class="muted">No system commands configured.</span>}
          {commands?.map((c) => <button key={`${c.source}/${c.action}`} role="menuitem" class="danger" onClick={() => void run(c)}>{c.name}…</button>)}
        </div>
      )}
    </div>
  );
}
