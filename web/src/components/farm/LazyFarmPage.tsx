// The Farm page, loaded when first opened: its code stays out of the main bundle.
import { useEffect, useState } from 'preact/hooks';
import type { FunctionComponent } from 'preact';

let loaded: FunctionComponent | null = null;

export function LazyFarmPage() {
  const [Page, setPage] = useState<FunctionComponent | null>(() => loaded);
  useEffect(() => {
    if (!loaded) void import('./FarmPage.tsx').then((m) => { loaded = m.FarmPage; setPage(() => m.FarmPage); });
  }, []);
  return Page ? <Page /> : <p class="muted">Loading…</p>;
}
