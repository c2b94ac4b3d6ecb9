// The phone's first page: the print's status card, the printer connection and an interrupted print's recovery offer
// (on a wide screen these sit in the sidebar and above the pages all the time).
import { ConnectionPanel } from '../ConnectionPanel.tsx';
import { StatusCard } from '../StatusCard.tsx';
import { RecoveryOffer } from '../RecoveryOffer.tsx';

export function StatusPage() {
  return (
    <div class="page-stack">
      <StatusCard />
      <RecoveryOffer />
      <ConnectionPanel />
    </div>
  );
}
