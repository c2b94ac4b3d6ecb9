// The page registry: every page of the control panel (its id, label, permission, view and place in the phone's bottom
// bar), the page shown now, kept in the address's hash so a reload or the back button lands on the same page.
import { signal, computed } from '@preact/signals';
import type { ComponentType } from 'preact';

export interface PageDef {
  id: string;
  label: string;
  /** One or two characters shown above the label in the phone's bottom bar. */
  icon: string;
  /** The permission the page needs (ADMIN implies all). */
  perm: string;
  view: ComponentType;
  /** Position in the navigation (lower first). */
  order: number;
  /** Position in the phone's bottom bar (1–4); pages without one are under "More". */
  bar?: number;
  /** Only in the phone layout: on a wide screen the status card and the sidebar show it all the time. */
  phoneOnly?: boolean;
}

const registry = signal<PageDef[]>([]);

/**
 * Adds a page to the navigation. Another part of the UI registers its page from its own file (imported once from
 * components/pages/index.ts); a second registration of an id replaces the first.
 */
export function registerPage(def: PageDef): void {
  registry.value = [...registry.value.filter((p) => p.id !== def.id), def].sort((a, b) => a.order - b.order);
}

export const allPages = computed(() => registry.value);

function fromHash(): string {
  return decodeURIComponent(location.hash.replace(/^#\/?/, ''));
}

/** The id of the page asked for (it may not exist or not be allowed: App falls back to the first one). */
export const activePage = signal<string>(fromHash());

/** Shows a page: a page is a view of its own, so it starts at the top (on a phone a tap used to change content below the fold). */
export function goTo(id: string): void {
  if (activePage.value !== id) {
    activePage.value = id;
    history.pushState(null, '', `#/${encodeURIComponent(id)}`);
  }
  scrollTo({ top: 0 });
}

// Back and forward move between pages.
addEventListener('popstate', () => {
  const id = fromHash();
  if (id && id !== activePage.value) {
    activePage.value = id;
    scrollTo({ top: 0 });
  }
});

/** The phone layout (the same width as the stylesheet's): one page at a time, the bottom bar, the compact header. */
const NARROW = '(max-width: 820px)';
const query = matchMedia(NARROW);
export const narrow = signal(query.matches);
// Taken once the width has settled: a full-page capture (and some window managers' resizes) passes through a narrow
// width for an instant, and switching layouts draws the page anew, dropping what it held (a selection, an open dialog).
let settling: ReturnType<typeof setTimeout> | undefined;
query.addEventListener('change', () => {
  clearTimeout(settling);
  settling = setTimeout(() => { narrow.value = query.matches; }, 200);
});
