// The file manager (the Files page): local files as a table (thumbnail, name, size, print time, filament, last printed
// and its result) with folders and breadcrumbs, search and sort, multi-select with move and delete, SD card files, upload
// by drag-and-drop or keyboard with progress, a larger thumbnail on hover, and per-file actions (models get Slice).
import { at } from '../lib/base.ts';
import { useRef, useState } from 'preact/hooks';
import { post, del, upload, encodePath } from '../lib/api.ts';
import { confirmDialog, promptDialog } from '../lib/dialogs.ts';
import { bytes, date, duration, filament } from '../lib/format.ts';
import { fileEstimate } from '../lib/job-status.ts';
import './file-manager.css';
import { analysisProgress, attempt, busyFiles, can, files, job, loadFiles, notify, previewPath, printerState, settings } from '../lib/store.ts';
import type { FileEntry } from '../lib/types.ts';
import { goTo } from '../lib/pages.ts';
import { SliceDialog } from './SliceDialog.tsx';

type SortKey = 'date' | 'name' | 'size' | 'printed';

/**
 * How low the free space is against `server.diskspace` (OctoPrint's defaults, 500 MiB and 200 MiB, for users who may
 * not read the settings): a full disk stops uploads, timelapses and the print journal, so it is said before it happens.
 */
function diskLevel(free: number): 'critical' | 'warning' | null {
  const limits = settings.value?.server?.diskspace;
  if (free < (limits?.critical ?? 200 * 1024 * 1024)) return 'critical';
  if (free < (limits?.warning ?? 500 * 1024 * 1024)) return 'warning';
  return null;
}
const SORTS: Record<SortKey, (a: FileEntry, b: FileEntry) => number> = {
  date: (a, b) => (b.date ?? 0) - (a.date ?? 0),
  name: (a, b) => (a.display ?? a.name).localeCompare(b.display ?? b.name, undefined, { numeric: true }),
  size: (a, b) => (b.size ?? 0) - (a.size ?? 0),
  printed: (a, b) => (b.prints?.last?.date ?? 0) - (a.prints?.last?.date ?? 0),
};
const isModel = (e: FileEntry) => e.typePath?.[0] === 'model';
/**
 * Rows shown at once in a folder or a search, more on request: a folder of 3,000 files drew every row in one go, a
 * 0.5 s freeze of the page (Chromium's long-task timing), again after each change to the listing.
 */
const ROWS = 200;

/** Every file below a folder whose name holds the search text, with its folder path shown. */
function search(entries: FileEntry[], text: string): FileEntry[] {
  const out: FileEntry[] = [];
  const walk = (list: FileEntry[]) => {
    for (const e of list) {
      if (e.type === 'folder') walk(e.children ?? []);
      else if (e.path.toLowerCase().includes(text)) out.push(e);
    }
  };
  walk(entries);
  return out;
}

function findFolder(entries: FileEntry[], path: string): FileEntry[] {
  if (!path) return entries;
  let list = entries;
  for (const part of path.split('/')) {
    const f = list.find((e) => e.type === 'folder' && e.name === part);
    if (!f) return [];
    list = f.children ?? [];
  }
  return list;
}

function sorted(entries: FileEntry[], key: SortKey = 'date'): FileEntry[] {
  return [...entries].sort((a, b) => (a.type === 'folder') !== (b.type === 'folder') ? (a.type === 'folder' ? -1 : 1) : SORTS[key](a, b));
}

export function FilesPanel() {
  const [folder, setFolder] = useState('');
  const [uploadState, setUpload] = useState<{ name: string; fraction: number } | null>(null);
  const [dragging, setDragging] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [toSd, setToSd] = useState(false);
  const [query, setQuery] = useState('');
  const [sortKey, setSortKey] = useState<SortKey>(() => (localStorage.getItem('gantry.sort') as SortKey | null) ?? 'date');
  const [slicing, setSlicing] = useState<FileEntry | null>(null);
  const [more, setMore] = useState({ view: '', rows: ROWS });
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const picker = useRef<HTMLInputElement>(null);
  const all = files.value?.files ?? [];
  const local = all.filter((e) => e.origin === 'local');
  const sd = all.filter((e) => e.origin === 'sdcard');
  const q = query.trim().toLowerCase();
  const entries = q ? sorted(search(local, q), sortKey) : sorted(findFolder(local, folder), sortKey);
  // Another folder, search or order starts again from the first rows.
  const view = `${folder}\0${q}\0${sortKey}`;
  const rows = more.view === view ? more.rows : ROWS;
  const flags = printerState.value.flags;
  const selected = job.value?.file;
  const busy = new Set(busyFiles.value.map((b) => `${b.origin}:${b.path}`));

  const sdAvailable = settings.value?.feature?.sdSupport !== false && flags.sdReady;
  const sdTarget = toSd && sdAvailable && flags.ready;
  const uploadFiles = async (list: FileList | File[]) => {
    if (!can('FILES_UPLOAD')) return;
    for (const file of Array.from(list)) {
      const exists = !sdTarget && findFolder(local, folder).some((e) => e.type !== 'folder' && (e.display === file.name || e.name === file.name));
      if (exists && settings.value?.feature?.uploadOverwriteConfirmation !== false
        && !(await confirmDialog('Replace file', `${file.name} already exists. Replace it?`, 'Replace', { cancel: 'Keep it', danger: true }))) continue;
      const form = new FormData();
      form.append('file', file, file.name);
      if (folder && !sdTarget) form.append('path', folder);
      setUpload({ name: file.name, fraction: 0 });
      const target = sdTarget ? '/api/files/sdcard' : '/api/files/local';
      const ok = await attempt(`Upload of ${file.name}`, () => upload(target, form, (fraction) => setUpload({ name: file.name, fraction })));
      if (ok) notify(`Uploaded ${file.name}`);
    }
    setUpload(null);
    void loadFiles();
  };

  const select = (e: FileEntry, print: boolean) =>
    attempt(print ? 'Print' : 'Select', () => post(`/api/files/${e.origin}/${encodePath(e.path)}`, { command: 'select', print }));
  const remove = async (e: FileEntry) => {
    if (!(await confirmDialog('Delete', `Delete ${e.display ?? e.name}${e.type === 'folder' ? ' and everything in it' : ''}?`, 'Delete', { cancel: 'Keep', danger: true }))) return;
    if (await attempt('Delete', () => del(`/api/files/${e.origin}/${encodePath(e.path)}`))) void loadFiles();
  };
  const move = async (e: FileEntry) => {
    const dest = await promptDialog('Move or rename', 'New path (a folder name moves it into that folder):', e.path, 'Move');
    if (dest === null || dest === e.path) return;
    if (await attempt('Move', () => post(`/api/files/local/${encodePath(e.path)}`, { command: 'move', destination: dest }))) void loadFiles();
  };
  const newFolder = async () => {
    const name = await promptDialog('New folder', 'Folder name:', '', 'Create');
    if (!name) return;
    const form = new FormData();
    form.append('foldername', name);
    if (folder) form.append('path', folder);
    if (await attempt('Create folder', () => upload('/api/files/local', form, () => undefined))) void loadFiles();
  };
  // Multi-select: paths of local files and folders in the folder shown; another folder or search starts afresh.
  const shownPaths = new Set(entries.map((e) => e.path));
  const chosen = [...picked].filter((p) => shownPaths.has(p));
  const toggle = (path: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(path); else next.delete(path);
    setPicked(next);
  };
  const moveChosen = async () => {
    const dest = await promptDialog('Move files', `Move ${chosen.length} item${chosen.length === 1 ? '' : 's'} into the folder (empty: the top folder):`, folder, 'Move');
    if (dest === null) return;
    const target = dest.split('/').filter(Boolean).join('/');
    let moved = 0;
    for (const path of chosen) {
      const name = path.split('/').pop() ?? path;
      const destination = target ? `${target}/${name}` : name;
      if (destination === path) continue;
      if (await attempt(`Move of ${name}`, () => post(`/api/files/local/${encodePath(path)}`, { command: 'move', destination }))) moved++;
    }
    setPicked(new Set());
    if (moved) notify(`Moved ${moved} item${moved === 1 ? '' : 's'}`);
    void loadFiles();
  };
  const deleteChosen = async () => {
    if (!(await confirmDialog('Delete files', `Delete ${chosen.length} item${chosen.length === 1 ? '' : 's'} (folders with everything in them)?`, 'Delete', { cancel: 'Keep', danger: true }))) return;
    for (const path of chosen) await attempt(`Delete of ${path}`, () => del(`/api/files/local/${encodePath(path)}`));
    setPicked(new Set());
    void loadFiles();
  };
  const canBulk = can('FILES_DELETE');
  const check = (e: FileEntry) => e.origin === 'local' && canBulk
    ? <input type="checkbox" class="pick" aria-label={`Select ${e.display ?? e.name}`} checked={chosen.includes(e.path)} onChange={(ev) => toggle(e.path, ev.currentTarget.checked)} />
    : <span class="pick" />;
  const preview = (e: FileEntry) => {
    previewPath.value = e.path;
    goTo('preview');
  };

  const analysing = (path: string, started: boolean): string => {
    const fraction = analysisProgress.value[path];
    if (fraction === undefined) return started ? 'analysing…' : 'pending';
    return `analysing, ${Math.floor(fraction * 100)} %`;
  };

  const crumbs = folder ? folder.split('/') : [];
  const row = (e: FileEntry) => {
    const isSel = selected?.origin === e.origin && (selected.path ?? selected.name) === e.path;
    const inUse = busy.has(`${e.origin}:${e.path}`);
    if (e.type === 'folder') {
      return (
        <li key={e.path} class="file folder" data-folder={e.path}>
          {check(e)}
          <span class="thumb-cell" aria-hidden="true">📁</span>
          <button class="link name" onClick={() => setFolder(e.path)}>📁 {e.display ?? e.name}</button>
          <span class="muted col-size">{bytes(e.size)}</span>
          <span class="col-time" /><span class="col-fil" /><span class="col-last" />
          {can('FILES_DELETE') && <span class="actions">
            {can('FILES_UPLOAD') && <button class="small" onClick={() => move(e)}>Move</button>}
            <button class="small danger" disabled={inUse} onClick={() => remove(e)}>Delete</button>
          </span>}
        </li>
      );
    }
    const a = e.gcodeAnalysis;
    const expanded = open === `${e.origin}:${e.path}`;
    const model = isModel(e);
    const estimate = fileEstimate(e);
    // busyFiles lists the running job's file and the files being analysed. The server prints a file under analysis (it
    // sets the analysis aside), and deletes or moves one (it cancels the analysis): only the job holds a file here.
    const jobFile = isSel && !flags.ready && !flags.closedOrError;
    const underAnalysis = inUse && !jobFile;
    return (
      <li key={`${e.origin}:${e.path}`} class={`file${isSel ? ' selected' : ''}${e.thumbnail ? ' has-thumb' : ''}`} data-file={e.path}>
        {check(e)}
        <span class="thumb-cell">{e.thumbnail
          ? <img class="thumb" src={at(`/${e.thumbnail}`)} alt="" loading="lazy" data-testid="file-thumb" />
          : <span class="thumb-none" aria-hidden="true">{model ? '⬡' : '▤'}</span>}</span>
        <button class="link name" title={e.path} aria-expanded={expanded} onClick={() => setOpen(expanded ? null : `${e.origin}:${e.path}`)}>{q ? e.path : (e.display ?? e.name)}</button>
        <span class="muted col-size">{bytes(e.size)}{model ? ' · model' : ''}{underAnalysis ? ' · analysing…' : ''}</span>
        <span class="col-time" data-testid="file-estimate" title={estimate ? `From the ${estimate.source}` : undefined}>{estimate ? duration(estimate.seconds) : '–'}</span>
        <span class="col-fil">{a ? filament(a.filament as Record<string, unknown>).replace(/ \/ [^,]*/g, '') : '–'}</span>
        <span class="col-last" data-testid="file-last">{e.prints?.last
          ? <>{new Date(e.prints.last.date * 1000).toLocaleDateString()} <span class={e.prints.last.success ? 'good-text' : 'error'}>{e.prints.last.success ? '✓ done' : '✗ failed'}</span></>
          : <span class="muted">never</span>}</span>
        <span class="actions">
          {model ? can('SLICE') && <button class="small primary" onClick={() => setSlicing(e)}>Slice…</button> : <>
            {can('FILES_SELECT') && <button class="small" disabled={!flags.ready} onClick={() => select(e, false)}>Load</button>}
            {can('PRINT') && can('FILES_SELECT') && <button class="small primary" disabled={!flags.ready} onClick={() => select(e, true)}>Print</button>}
          </>}
        </span>
        {expanded && (
          <div class="details">
            <dl class="facts">
              <dt>Uploaded</dt><dd>{date(e.date)}</dd>
              {a ? <>
                <dt>Estimated time</dt><dd>{duration(estimate?.seconds ?? a.estimatedPrintTime)}{estimate ? <span class="muted"> ({estimate.source})</span> : null}</dd>
                {a.gantry?.slicer?.estimatedPrintTime ? <><dt>Slicer's estimate</dt><dd>{duration(a.gantry.slicer.estimatedPrintTime)}</dd></> : null}
                <dt>Filament</dt><dd>{filament(a.filament as Record<string, unknown>)}</dd>
                {a.dimensions && <><dt>Size</dt><dd>{a.dimensions.width.toFixed(1)} × {a.dimensions.depth.toFixed(1)} × {a.dimensions.height.toFixed(1)} mm</dd></>}
              </> : e.origin === 'local' && !model ? <><dt>Analysis</dt><dd class="muted">{analysing(e.path, underAnalysis)}</dd></> : null}
              {e.prints && <><dt>Prints</dt><dd>{e.prints.success} ok, {e.prints.failure} failed</dd></>}
            </dl>
            <div class="buttons">
              {e.origin === 'local' && !model && can('FILES_DOWNLOAD') && <button class="small" onClick={() => preview(e)}>Preview</button>}
              {e.origin === 'local' && can('FILES_DOWNLOAD') && e.refs?.download && <a class="button small" href={e.refs.download} download>Download</a>}
              {e.origin === 'local' && can('FILES_UPLOAD') && can('FILES_DELETE') && <button class="small" disabled={jobFile} onClick={() => move(e)}>Move</button>}
              {can('FILES_DELETE') && <button class="small danger" disabled={jobFile} onClick={() => remove(e)}>Delete</button>}
            </div>
          </div>
        )}
      </li>
    );
  };

  return (
    <section
      class={`panel files${dragging ? ' dragging' : ''}`} aria-label="Files"
      onDragOver={(e) => { if (can('FILES_UPLOAD')) { e.preventDefault(); setDragging(true); } }}
      onDragLeave={(e) => { if (e.currentTarget === e.target) setDragging(false); }}
      onDrop={(e) => { e.preventDefault(); setDragging(false); if (e.dataTransfer?.files.length) void uploadFiles(e.dataTransfer.files); }}
    >
      <h2>Files <button class="icon" title="Refresh (also asks the printer for its SD card listing)" aria-label="Refresh files" onClick={() => void loadFiles(true)}>↻</button></h2>
      {can('FILES_UPLOAD') && (
        <div class="upload">
          {uploadState ? (
            <div class="progress" role="progressbar" aria-label="Upload progress" aria-valuenow={Math.round(uploadState.fraction * 100)}>
              <div class="bar" style={{ width: `${uploadState.fraction * 100}%` }} />
              <span>{uploadState.name}: {Math.round(uploadState.fraction * 100)} %</span>
            </div>
          ) : (
            <p class="drop-hint">Drop G-code files here, or</p>
          )}
          <div class="buttons">
            {/* A real button, so the upload is reachable by keyboard; it opens the hidden file picker. */}
            <button type="button" onClick={() => picker.current?.click()}>Upload…</button>
            <input ref={picker} type="file" accept=".gcode,.gco,.g,.stl,.3mf,.obj" multiple hidden data-testid="upload-input" aria-label="Files to upload"
              onChange={(e) => { const fl = e.currentTarget.files; if (fl?.length) void uploadFiles(Array.from(fl)); e.currentTarget.value = ''; }} />
            <button onClick={newFolder}>New folder</button>
          </div>
          {sdAvailable && <label class="check small"><input type="checkbox" checked={toSd} disabled={!flags.ready} onChange={(e) => setToSd(e.currentTarget.checked)} /> Upload to the printer's SD card</label>}
          {files.value?.free !== undefined && <FreeSpace free={files.value.free} />}
        </div>
      )}
      <div class="file-tools">
        <input type="search" placeholder="Search files" aria-label="Search files" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        <select aria-label="Sort files by" value={sortKey} onChange={(e) => { const k = e.currentTarget.value as SortKey; setSortKey(k); localStorage.setItem('gantry.sort', k); }}>
          <option value="date">Newest</option><option value="name">Name</option><option value="size">Size</option><option value="printed">Last printed</option>
        </select>
      </div>
      {!q && <nav class="crumbs" aria-label="Folder" data-testid="crumbs">
        <button class="link" aria-current={crumbs.length === 0 ? 'location' : undefined} onClick={() => setFolder('')}>local</button>
        {crumbs.map((c, i) => <span key={i}> / <button class="link" aria-current={i === crumbs.length - 1 ? 'location' : undefined}
          onClick={() => setFolder(crumbs.slice(0, i + 1).join('/'))}>{c}</button></span>)}
      </nav>}
      {chosen.length > 0 && (
        <div class="bulk" role="toolbar" aria-label="Selected files" data-testid="bulk-bar">
          <span>{chosen.length} selected</span>
          {can('FILES_UPLOAD') && <button class="small" onClick={() => void moveChosen()}>Move selected…</button>}
          <button class="small danger" onClick={() => void deleteChosen()}>Delete selected</button>
          <button class="small" onClick={() => setPicked(new Set())}>Clear selection</button>
        </div>
      )}
      <div class="file-head" aria-hidden="true">
        <span class="pick">{canBulk && entries.length > 0 && <input type="checkbox" tabIndex={-1} checked={entries.length > 0 && chosen.length === entries.filter((e) => e.origin === 'local').length}
          onChange={(ev) => setPicked(new Set(ev.currentTarget.checked ? entries.filter((e) => e.origin === 'local').map((e) => e.path) : []))} />}</span>
        <span class="thumb-cell" /><span>Name</span><span class="col-size">Size</span><span class="col-time">Print time</span><span class="col-fil">Filament</span><span class="col-last">Last printed</span><span class="actions" />
      </div>
      <ul class="file-list" data-testid="file-list">
        {folder && !q && <li class="file folder up"><span class="pick" /><span class="thumb-cell" aria-hidden="true">⬑</span><button class="link name" onClick={() => setFolder(crumbs.slice(0, -1).join('/'))}>⬑ up</button></li>}
        {entries.length === 0 && <li class="muted empty">{q ? 'No file matches.' : 'No files here yet.'}</li>}
        {entries.slice(0, rows).map(row)}
        {entries.length > rows && (
          <li class="file more">
            <button class="link" onClick={() => setMore({ view, rows: rows + ROWS })}>
              Show {Math.min(ROWS, entries.length - rows)} more ({entries.length - rows} not shown)
            </button>
          </li>
        )}
      </ul>
      {sdAvailable && (
        <>
          <h3>SD card</h3>
          <ul class="file-list" data-testid="sd-list">
            {sd.length === 0 && <li class="muted empty">No files on the SD card.</li>}
            {sorted(sd, sortKey).map(row)}
          </ul>
        </>
      )}
      {slicing && <SliceDialog file={slicing} onClose={() => setSlicing(null)} />}
    </section>
  );
}

function FreeSpace({ free }: { free: number }) {
  const level = diskLevel(free);
  if (!level) return <p class="muted small" data-testid="free-space">Free: {bytes(free)}</p>;
  return (
    <p class={`small ${level === 'critical' ? 'error' : 'warning'}`} data-testid="free-space" role={level === 'critical' ? 'alert' : undefined}>
      Free: {bytes(free)} – {level === 'critical' ? 'the disk is almost full: uploads, timelapses and print recovery will fail' : 'disk space is running low'}
    </p>
  );
}
