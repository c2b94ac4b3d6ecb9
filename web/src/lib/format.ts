// Human-readable durations, sizes, dates and filament amounts for the panels.

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h}h ${String(m).padStart(2, '0')}m`;
  if (m > 0) return `${m}m ${String(sec).padStart(2, '0')}s`;
  return `${sec}s`;
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

export function date(unix: number | null | undefined): string {
  if (!unix) return '–';
  return new Date(unix * 1000).toLocaleString();
}

/** Filament of a job or analysis: `{tool0: {length mm, volume cm³}}` → "1.23 m / 2.9 cm³" per tool. */
export function filament(map: Record<string, unknown> | null | undefined): string {
  if (!map) return '–';
  const parts: string[] = [];
  for (const [tool, v] of Object.entries(map)) {
    if (!v || typeof v !== 'object') continue;
    const { length, volume } = v as { length?: number | null; volume?: number | null };
    if (typeof length !== 'number') continue;
    const label = Object.keys(map).length > 1 ? `${tool}: ` : '';
    parts.push(`${label}${(length / 1000).toFixed(2)} m${typeof volume === 'number' ? ` / ${volume.toFixed(1)} cm³` : ''}`);
  }
  return parts.length ? parts.join(', ') : '–';
}

const ORIGIN_TEXT: Record<string, string> = {
  linear: 'linear extrapolation',
  analysis: 'based on the file analysis',
  estimate: 'estimated',
  average: 'based on previous prints',
  'mixed-analysis': 'analysis and progress',
  'mixed-average': 'previous prints and progress',
};
export function leftOrigin(origin: string | null | undefined): string {
  return origin ? (ORIGIN_TEXT[origin] ?? origin) : '';
}

export function heaterLabel(key: string): string {
  if (key === 'bed') return 'Bed';
  if (key === 'chamber') return 'Chamber';
  const m = /^tool(\d+)$/.exec(key);
  if (m) return `Tool ${m[1]}`;
  return key;
}

export function temp(v: number | null | undefined): string {
  return typeof v === 'number' ? `${v.toFixed(1)}°C` : '–';
}
