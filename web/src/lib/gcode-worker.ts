// Worker that downloads and parses a G-code file for the preview, off the page's main thread.
import { parseGcode } from './gcode-layers.ts';

self.onmessage = async (e: MessageEvent<{ url: string }>) => {
  try {
    const res = await fetch(e.data.url, { credentials: 'same-origin' });
    if (!res.ok) throw new Error(`download failed: ${res.status} ${res.statusText}`);
    const parsed = parseGcode(await res.text());
    const transfer = parsed.layers.flatMap((l) => [l.segments.buffer, l.extruding.buffer]) as ArrayBuffer[];
    (self as unknown as Worker).postMessage({ ok: true, parsed }, transfer);
  } catch (err) {
    (self as unknown as Worker).postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) });
  }
};
