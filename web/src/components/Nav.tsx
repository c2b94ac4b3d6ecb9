// The navigation between pages: a row of tabs on a wide screen; on a phone a bar at the bottom with the four most used
// pages and a "More" menu for the rest (the sideways-scrolling row hid half of the pages with no cue).
import { useEffect, useRef, useState } from 'preact/hooks';
import { goTo, type PageDef } from '../lib/pages.ts';

/** Arrow keys, Home and End move between tabs (and show them), as the WAI-ARIA tabs pattern has it. */
function tabKeys(e: KeyboardEvent, ids: string[], current: string): void {
  const i = ids.indexOf(current);
  const to = e.key === 'ArrowRight' ? (i + 1) % ids.length : e.key === 'ArrowLeft' ? (i - 1 + ids.length) % ids.length
    : e.key === 'Home' ? 0 : e.key === 'End' ? ids.length - 1 : -1;
  if (to < 0) return;
  e.preventDefault();
  goTo(ids[to]);
  const tab = document.getElementById(`tab-${ids[to]}`);
  tab?.focus();
  tab?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

export function TabRow({ pages, current }: { pages: PageDef[]; current: string }) {
  return (
    <nav class="tabs" role="tablist" aria-label="Pages" onKeyDown={(e) => tabKeys(e, pages.map((p) => p.id), current)}>
      {pages.map((p) => {
        const sel = p.id === current;
        return (
          <button key={p.id} id={`tab-${p.id}`} role="tab" aria-selected={sel} aria-controls={`panel-${p.id}`} tabIndex={sel ? 0 : -1}
            class={sel ? 'active' : ''} onClick={() => goTo(p.id)}>{p.label}</button>
        );
      })}
    </nav>
  );
}

export function BottomBar({ pages, current }: { pages: PageDef[]; current: string }) {
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  const moreButton = useRef<HTMLButtonElement>(null);
  const bar = pages.filter((p) => p.bar).sort((a, b) => (a.bar ?? 0) - (b.bar ?? 0)).slice(0, 4);
  const rest = pages.filter((p) => !bar.includes(p));
  const inMore = rest.some((p) => p.id === current);

  useEffect(() => {
    if (!open) return;
    box.current?.querySelector<HTMLElement>('[role=menuitem]')?.focus();
    const away = (e: Event) => { if (!box.current?.contains(e.target as Node)) setOpen(false); };
    document.addEventListener('pointerdown', away);
    return () => document.removeEventListener('pointerdown', away);
  }, [open]);

  const pick = (id: string) => { setOpen(false); goTo(id); };
  const onKey = (e: KeyboardEvent) => {
    const items = [...(box.current?.querySelectorAll<HTMLElement>('[role=menuitem]') ?? [])];
    const i = items.indexOf(document.activeElement as HTMLElement);
    if (e.key === 'Escape') { e.preventDefault(); setOpen(false); moreButton.current?.focus(); }
    else if (e.key === 'ArrowDown') { e.preventDefault(); items[(i + 1) % items.length]?.focus(); }
    else if (e.key === 'ArrowUp') { e.preventDefault(); items[(i - 1 + items.length) % items.length]?.focus(); }
  };

  return (
    <nav class="bottom-bar" aria-label="Pages" data-testid="bottom-bar">
      {bar.map((p) => (
        <button key={p.id} aria-current={p.id === current ? 'page' : undefined} class={p.id === current ? 'active' : ''} onClick={() => pick(p.id)}>
          <span class="bar-icon" aria-hidden="true">{p.icon}</span>{p.label}
        </button>
      ))}
      {rest.length > 0 && (
        <div class="more-box" ref={box} onKeyDown={onKey}>
          <button ref={moreButton} aria-haspopup="menu" aria-expanded={open} aria-controls="more-menu" class={inMore ? 'active' : ''}
            aria-current={inMore ? 'page' : undefined} onClick={() => setOpen(!open)}>
            <span class="bar-icon" aria-hidden="true">⋯</span>More
          </button>
          {open && (
            <div class="menu more-menu" role="menu" id="more-menu" aria-label="More pages">
              {rest.map((p) => (
                <button key={p.id} role="menuitem" aria-current={p.id === current ? 'page' : undefined} onClick={() => pick(p.id)}>
                  <span class="bar-icon" aria-hidden="true">{p.icon}</span> {p.label}
                </button>
              ))}
            </div>
          )}
        </div>
      )}
    </nav>
  );
}
