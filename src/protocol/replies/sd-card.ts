// SD card reply parser: file list (M20), print status (M27), card state (M21/M22) and file selection (M23).
// Sample lines:
//   Begin file list
//   CUBE~1.GCO 123456
//   BENCHY~1.GCO 2345678 Benchy Boat.gcode        (M20 L: long name after the size)
//   /FOLDER/PART.GCO 1000
//   End file list
//   SD printing byte 1234/56789
//   Not SD printing
//   Done printing file
//   echo:SD card ok | SD card ok | echo:SD init fail | SD init fail | echo:SD card released
//   File opened: cube.gco Size: 123456
//   File selected

export type SdReply =
  | { kind: 'listBegin' }
  | { kind: 'listEnd' }
  | { kind: 'status'; position: number; total: number }
  | { kind: 'notPrinting' }
  | { kind: 'done' }
  | { kind: 'cardOk' }
  | { kind: 'cardFail' }
  | { kind: 'cardReleased' }
  | { kind: 'fileOpened'; name: string; size: number }
  | { kind: 'fileSelected' };

export function parseSdReply(line: string): SdReply | null {
  const text = line.startsWith('echo:') ? line.slice(5).trim() : line;
  if (text === 'Begin file list') return { kind: 'listBegin' };
  if (text === 'End file list') return { kind: 'listEnd' };
  if (text.startsWith('SD printing byte')) {
    // From the first digit of a number only (not from each digit of a 16 K-digit one: a second).
    const m = /(?<!\d)(\d+)\s*\/\s*(\d+)/.exec(text);
    return m ? { kind: 'status', position: Number(m[1]), total: Number(m[2]) } : null;
  }
  if (text.startsWith('Not SD printing')) return { kind: 'notPrinting' };
  if (text.startsWith('Done printing file')) return { kind: 'done' };
  if (text.startsWith('SD card ok')) return { kind: 'cardOk' };
  if (text.startsWith('SD init fail') || text.includes('volume.init failed') || text.startsWith('No SD card')) return { kind: 'cardFail' };
  if (text.startsWith('SD card released')) return { kind: 'cardReleased' };
  if (text.startsWith('File opened:')) {
    // The name runs to the white space before the first `Size:` with a number, that run matched from its start only:
    // as `File opened:\s*(.*?)\s+Size:\s*(\d+)` a line of spaces was tried in every split of them (hours for 16 KB).
    const rest = text.slice(12);
    const m = /(?<!\s)\s+Size:\s*(\d+)/.exec(rest);
    return m ? { kind: 'fileOpened', name: rest.slice(0, m.index).trimStart(), size: Number(m[1]) } : null;
  }
  if (text.startsWith('File selected')) return { kind: 'fileSelected' };
  return null;
}

export interface SdListEntry {
  name: string;
  size: number | null;
  longName: string | null;
}

/** One line between Begin and End file list. */
export function parseSdListEntry(line: string): SdListEntry | null {
  const text = line.trim();
  if (text === '') return null;
  const sp = text.indexOf(' ');
  if (sp === -1) return { name: text, size: null, longName: null };
  const name = text.slice(0, sp);
  const rest = text.slice(sp + 1).trim();
  const sp2 = rest.indexOf(' ');
  const sizeText = sp2 === -1 ? rest : rest.slice(0, sp2);
  const size = /^\d+$/.test(sizeText) ? Number(sizeText) : null;
  let longName: string | null = sp2 === -1 ? null : rest.slice(sp2 + 1).trim();
  // EXTENDED_M20 with T adds a timestamp like 0x5A3F...; keep only the name part.
  if (longName && /^0x[0-9a-fA-F]+\s/.test(longName)) longName = longName.replace(/^0x[0-9a-fA-F]+\s+/, '');
  return { name, size, longName: longName || null };
}
