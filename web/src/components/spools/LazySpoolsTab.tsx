// The Spools page, loaded when first opened: it stays out of the main bundle.
import { useEffect, useState } from 'preact/hooks';
import type { FunctionComponent } from 'preact';

let loaded: FunctionComponent | null = null;

export function LazySpoolsTab() {
  const [Page, setPage] = useState<FunctionComponent | null>(() => loaded);
  useEffect(() => {
    if (!loaded) void import('./SpoolsTab.tsx').then((m) => { loaded = m.SpoolsTab; setPage(() => m.SpoolsTab); });
  }, []);
  return Page ? <Page /> : <p class="muted">Loading…</p>;
}
