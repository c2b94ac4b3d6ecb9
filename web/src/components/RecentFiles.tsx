// The sidebar's short list: the newest files (uploaded or printed) with their estimate and a Print button, and the way
// to the file manager (the Files page) for everything else.
import { at } from '../lib/base.ts';
import { post, encodePath } from '../lib/api.ts';
import { duration } from '../lib/format.ts';
import { attempt, can, files, printerState } from '../lib/store.ts';
import { fileEstimate } from '../lib/job-status.ts';
import { goTo } from '../lib/pages.ts';
import type { FileEntry } from '../lib/types.ts';
import './file-manager.css';

const SHOWN = 5;

function flatten(list: FileEntry[], out: FileEntry[] = []): FileEntry[] {
  for (const e of list) {
    if (e.type === 'folder') flatten(e.children ?? [], out);
    else if (e.origin === 'local' && e.typePath?.[0] !== 'model') out.push(e);
  }
  return out;
}

export function RecentFiles() {
  const all = flatten(files.value?.files ?? []);
  const when = (e: FileEntry) => Math.max(e.date ?? 0, e.prints?.last?.date ?? 0);
  const recent = all.sort((a, b) => when(b) - when(a)).slice(0, SHOWN);
  const ready = printerState.value.flags.ready;
  const print = (e: FileEntry) => attempt('Print', () => post(`/api/files/local/${encodePath(e.path)}`, { command: 'select', print: true }));
  return (
    <section class="panel recent" aria-label="Recent" data-testid="recent-files">
      <h2>Recent</h2>
      {recent.length === 0 ? <p class="muted">No files yet.</p> : (
        <ul>
          {recent.map((e) => {
            const est = fileEstimate(e);
            return (
              <li key={e.path} data-recent={e.path}>
                {e.thumbnail ? <img src={at(`/${e.thumbnail}`)} alt="" loading="lazy" /> : <span class="thumb-none" aria-hidden="true">▤</span>}
                <span class="name">{e.display ?? e.name}<small>{est ? duration(est.seconds) : ''}{e.prints?.last ? ` · last ${e.prints.last.success ? 'done' : 'failed'}` : ''}</small></span>
                {can('PRINT') && can('FILES_SELECT') && <button class="small" disabled={!ready} aria-label={`Print ${e.display ?? e.name}`} onClick={() => void print(e)}>Print</button>}
              </li>
            );
          })}
        </ul>
      )}
      <div class="buttons"><button onClick={() => goTo('files')}>All files{can('FILES_UPLOAD') ? ' and upload' : ''} →</button></div>
    </section>
  );
}
