// Slicer thumbnails embedded in G-code (PrusaSlicer, OrcaSlicer, Cura): `; thumbnail begin WxH LEN` … `; thumbnail end`
// comment blocks of base64 PNG near the file's start. Reads only the head of the file.
import { fileChunks } from '../../core/file-chunks.ts';
import { splitLines } from '../../gcode/line-breaks.ts';

export interface Thumbnail { width: number; height: number; png: Buffer }

/** Slicers write their previews right after the header; nothing past this many bytes is read. */
const HEAD_BYTES = 4 * 1024 * 1024;
// `thumbnail` is PNG (PrusaSlicer before 2.4, Cura, Orca), `thumbnail_PNG` PrusaSlicer's newer name; JPG/QOI are skipped
// (served as .png they would be wrong, and the slicers that write them write a PNG too).
const BEGIN = /^;\s*thumbnail(?:_PNG)?\s+begin\s+(\d+)x(\d+)\s+(\d+)/i;
const END = /^;\s*thumbnail(?:_PNG)?\s+end/i;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** The lines of the file's head (latin1: base64 and ASCII comments are all it looks for), line ends stripped. */
async function* headLines(abs: string): AsyncGenerator<string> {
  let carry = '';
  for await (const chunk of fileChunks(abs, { end: HEAD_BYTES })) {
    const lines = splitLines(carry + chunk.toString('latin1'));
    carry = lines.pop() ?? '';
    yield* lines;
  }
  if (carry) yield carry;
}

/** Every PNG preview in the file's head, in file order (the Moonraker edge lists them all). */
export async function readThumbnails(abs: string): Promise<Thumbnail[]> {
  const found: Thumbnail[] = [];
  let open: { width: number; height: number; parts: string[] } | null = null;
  let seenCode = 0;
  for await (const raw of headLines(abs)) {
    const line = raw.trim();
    if (open) {
      if (END.test(line)) {
        const png = Buffer.from(open.parts.join(''), 'base64');
        if (png.subarray(0, 4).equals(PNG_MAGIC)) found.push({ width: open.width, height: open.height, png });
        open = null;
      } else {
        open.parts.push(line.replace(/^;\s*/, ''));
      }
      continue;
    }
    const m = BEGIN.exec(line);
    if (m) {
      open = { width: Number(m[1]), height: Number(m[2]), parts: [] };
    } else if (line && !line.startsWith(';')) {
      // Previews precede the moves; after a few hundred G-code lines there is nothing more to find.
      if (++seenCode > 500 && !open) break;
    }
  }
  return found;
}

/** The largest PNG preview in the file's head, or null when it carries none. */
export async function readThumbnail(abs: string): Promise<Thumbnail | null> {
  let best: Thumbnail | null = null;
  for (const t of await readThumbnails(abs)) if (!best || t.width * t.height > best.width * best.height) best = t;
  return best;
}

export const THUMBNAIL_SRC = 'prusaslicerthumbnails';
const THUMBNAIL_PREFIX = 'plugin/prusaslicerthumbnails/thumbnail/';

/**
 * The file entry's `thumbnail`, relative as OctoPrint's PrusaSlicer-thumbnails plugin gives it: the G-code's path with
 * `.png` for its extension, and a stamp that changes with the file so browsers do not show an old picture.
 */
export function thumbnailRef(path: string, stamp: number | undefined): string {
  const png = path.replace(/\.[^./]*$/, '') + '.png';
  return `${THUMBNAIL_PREFIX}${png.split('/').map(encodeURIComponent).join('/')}?${stamp ?? 0}`;
}
