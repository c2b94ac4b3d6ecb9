// The OctoPrint events a change of the local files fires: what was added, removed or moved, for files and folders.
import type { EventBus } from '../core/event-bus.ts';
import type { FileTypes } from './file-types.ts';
import { joinPath } from './safe-path.ts';

/** After `src` was copied or moved to `dst`: a move is a removal, an addition and the move itself, in that order. */
export function emitTransfer(ev: EventBus, types: FileTypes, kind: 'file' | 'folder', mode: 'copy' | 'move', src: string[], dst: string[]): void {
  const srcPath = joinPath(src);
  const dstPath = joinPath(dst);
  const name = dst[dst.length - 1];
  if (kind === 'file') {
    const typePath = types.typePathOf(name) ?? [];
    if (mode === 'move') {
      ev.emit('FileRemoved', { storage: 'local', path: srcPath, name: src[src.length - 1], type: types.typePathOf(src[src.length - 1]) ?? [] });
    }
    ev.emit('FileAdded', { storage: 'local', path: dstPath, name, type: typePath, operation: mode });
    if (mode === 'move') {
      ev.emit('FileMoved', { storage: 'local', source_path: srcPath, source_name: src[src.length - 1],
        source_type: types.typePathOf(src[src.length - 1]) ?? [], destination_path: dstPath, destination_name: name, destination_type: typePath });
    }
  } else {
    if (mode === 'move') ev.emit('FolderRemoved', { storage: 'local', path: srcPath, name: src[src.length - 1] });
    ev.emit('FolderAdded', { storage: 'local', path: dstPath, name });
    if (mode === 'move') ev.emit('FolderMoved', { storage: 'local', source_path: srcPath, source_name: src[src.length - 1], destination_path: dstPath, destination_name: name });
  }
}

/** After the file or folder at `parts` was deleted. */
export function emitRemoval(ev: EventBus, types: FileTypes, kind: 'file' | 'folder', parts: string[]): void {
  const name = parts[parts.length - 1];
  if (kind === 'file') ev.emit('FileRemoved', { storage: 'local', path: joinPath(parts), name, type: types.typePathOf(name) ?? [] });
  else ev.emit('FolderRemoved', { storage: 'local', path: joinPath(parts), name });
}
