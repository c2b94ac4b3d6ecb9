// The printer's own screen while printing: M117 from a template and M73 P<percent> R<minutes>, each off by default,
// sent only when the text changed and at most once per its interval, so a line or two a minute joins the stream.

export interface DisplayValues {
  layer: string;
  layers: string;
  progress: number | null;
  height: string;
  totalHeight: string;
  /** Seconds left, or null. */
  left: number | null;
  file: string;
}

/** `1h05m`, `12m`, `40s` (plain ASCII: the firmware's LCD charset has no `·` or `…`). */
export function shortDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return '-';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m`;
  return `${s}s`;
}

/** The template filled in and reduced to printable ASCII (firmware LCDs show nothing else reliably). */
export function renderM117(template: string, v: DisplayValues): string {
  const text = template.replace(/\{(layer|layers|progress|height|totalHeight|left|file)\}/g, (_m, k: string) => {
    switch (k) {
      case 'layer': return v.layer;
      case 'layers': return v.layers;
      case 'progress': return v.progress === null ? '-' : String(Math.floor(v.progress));
      case 'height': return v.height;
      case 'totalHeight': return v.totalHeight;
      case 'left': return shortDuration(v.left);
      default: return v.file;
    }
  });
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    out += c >= 32 && c < 127 ? ch : c === 0xb7 ? '-' : '?';
  }
  // Marlin's LCD line is about 20 characters; longer texts scroll (MARQUEE) or are cut. A `;` would start a comment.
  return out.replaceAll(';', ',').slice(0, 60).trim();
}

export interface Throttle { last: string; at: number }

/** The line to send now, or null (unchanged, or within `intervalS` of the last one). */
export function throttled(t: Throttle, line: string, now: number, intervalS: number): string | null {
  if (line === t.last || now - t.at < intervalS * 1000) return null;
  t.last = line;
  t.at = now;
  return line;
}
