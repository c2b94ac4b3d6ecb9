// The setup wizard, loaded when it first opens: its code stays out of the main bundle.
import { useEffect, useState } from 'preact/hooks';
import type { FunctionComponent } from 'preact';
import { setupOpen } from '../../lib/setup.ts';

let loaded: FunctionComponent | null = null;

export function LazySetupWizard() {
  const open = setupOpen.value;
  const [Wizard, setWizard] = useState<FunctionComponent | null>(() => loaded);
  useEffect(() => {
    if (open && !loaded) void import('./SetupWizard.tsx').then((m) => { loaded = m.SetupWizard; setWizard(() => m.SetupWizard); });
  }, [open]);
  return open && Wizard ? <Wizard /> : null;
}
