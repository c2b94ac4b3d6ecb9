// The Bed mesh page, loaded when first opened: its drawing code stays out of the main bundle.
import { useEffect, useState } from 'preact/hooks';
import type { FunctionComponent } from 'preact';

let loaded: FunctionComponent | null = null;

export function LazyBedMeshTab() {
  const [Page, setPage] = useState<FunctionComponent | null>(() => loaded);
  useEffect(() => {
    if (!loaded) void import('./BedMeshTab.tsx').then((m) => { loaded = m.BedMeshTab; setPage(() => m.BedMeshTab); });
  }, []);
  return Page ? <Page /> : <p class="muted">Loading…</p>;
}
