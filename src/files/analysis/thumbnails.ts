// Slicer thumbnails embedded in G-code (PrusaSlicer, OrcaSlicer, Cura): `; thumbnail begin WxH LEN` … `; thumbnail end`
// comment blocks of base64 PNG near the file's start. Reads only the head of the file.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Thumbnail { width: number; height: number; png: Buffer }

/** Slicers write their previews right after the header; nothing past this many bytes is read. */
const HEAD_BYTES = 4 * 1024 * 1024;
// `thumbnail` is PNG (PrusaSlicer before 2.4, Cura, Orca), `thumbnail_PNG` PrusaSlicer's newer name; JPG/QOI are skipped
// (served as .png they would be wrong, and the slicers that write them write a PNG too).
const BEGIN = /^;\s*thumbnail(?:_PNG)?\s+begin\s+(\d+)x(\d+)\s+(\d+)/i;
const END = /^;\s*thumbnail(?:_PNG)?\s+end/i;
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** The largest PNG preview in the file's head, or null when it carries none. */
export async function readThumbnail(abs: string): Promise<Thumbnail | null> {
  const stream = createReadStream(abs, { start: 0, end: HEAD_BYTES - 1, encoding: 'latin1' });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let best: Thumbnail | null = null;
  let open: { width: number; height: number; parts: string[] } | null = null;
  let seenCode = 0;
  try {
    for await (const raw of lines) {
      const line = raw.trim();
      if (open) {
        if (END.test(line)) {
          const png = Buffer.from(open.parts.join(''), 'base64');
          if (png.subarray(0, 4).equals(PNG_MAGIC) && (!best || open.width * open.height > best.width * best.height)) {
            best = { width: open.width, height: open.height, png };
          }
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
  } finally {
    lines.close();
    stream.destroy();
  }
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
