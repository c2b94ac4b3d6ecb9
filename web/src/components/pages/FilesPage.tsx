// The files page: the file manager on a page of its own.
import { FilesPanel } from '../FilesPanel.tsx';

export function FilesPage() {
  return <FilesPanel />;
}
