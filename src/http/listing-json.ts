// File listings as JSON bytes, each local file's JSON kept with the entry it was made from while that entry lives.
import type { StoredEntry, StoredFile } from '../files/types.ts';
import { folderFields, toWire } from '../octoprint/file-entry.ts';

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const CHILDREN_CLOSE = Buffer.from(']}');

/** Base URLs (Host, X-Forwarded-*, X-Script-Name) whose entries are kept; callers choose these headers, so few are. */
const MAX_BASES = 8;

/**
 * The local storage hands out the same file entry while the file, its metadata and its type stay the same
 * (files/local-storage.ts), so the JSON of an entry made once serves every later listing that holds it: a library of
 * 5,000 files polled again cost the wire form and JSON of every entry each time (≈ 120 ms in one piece, and as much
 * again in garbage collection), where now only what changed is made. Kept as bytes, outside V8's heap. The bytes are
 * those of JSON.stringify of toWire, folder by folder; test/http/listing-json.test.ts holds them to that.
 */
export class ListingJson {
  private readonly byBase = new Map<string, WeakMap<StoredFile, Buffer>>();

  /** `[entry,entry,…]` of `entries` with URLs on `base`. */
  render(base: string, entries: readonly StoredEntry[]): Buffer {
    const made = this.entriesOf(base);
    const out: Out = { parts: [OPEN], length: OPEN.length, files: [] };
    this.append(out, base, entries, made);
    push(out, CLOSE);
    const listing = Buffer.concat(out.parts, out.length);
    // Each file's JSON is kept as a view of the listing, which is kept anyway (the route keeps it while the listing
    // is valid): held on their own, the entries of 5,000 files took 7 MB more. The copies they were are let go.
    for (const { file, start, end } of out.files) made.set(file, listing.subarray(start, end));
    return listing;
  }

  private entriesOf(base: string): WeakMap<StoredFile, Buffer> {
    let made = this.byBase.get(base);
    if (made) {
      this.byBase.delete(base);
    } else {
      made = new WeakMap();
      if (this.byBase.size >= MAX_BASES) this.byBase.delete(this.byBase.keys().next().value as string);
    }
    this.byBase.set(base, made);
    return made;
  }

  private append(out: Out, base: string, entries: readonly StoredEntry[], made: WeakMap<StoredFile, Buffer>): void {
    entries.forEach((e, i) => {
      if (i > 0) push(out, COMMA);
      if (e.kind === 'folder') {
        const fields = JSON.stringify(folderFields(base, e));
        push(out, Buffer.from(`${fields.slice(0, -1)},"children":[`));
        this.append(out, base, e.children, made);
        push(out, CHILDREN_CLOSE);
        return;
      }
      if (e.origin !== 'local') {
        push(out, Buffer.from(JSON.stringify(toWire(base, e))));
        return;
      }
      const json = made.get(e) ?? Buffer.from(JSON.stringify(toWire(base, e)));
      out.files.push({ file: e, start: out.length, end: out.length + json.length });
      push(out, json);
    });
  }
}

/** A listing being put together: its parts, their length so far, and where each local file's JSON lies in it. */
interface Out { parts: Buffer[]; length: number; files: { file: StoredFile; start: number; end: number }[] }

function push(out: Out, part: Buffer): void {
  out.parts.push(part);
  out.length += part.length;
}
