// The import's account of itself: what was taken, what was left and why. Printed, and saved in the target base dir.

export interface Skipped {
  /** What was not taken: a config key path, a file, a user, a permission. */
  what: string;
  why: string;
}

export class ImportReport {
  readonly skipped: Skipped[] = [];
  readonly notes: string[] = [];
  readonly counts = new Map<string, number>();

  skip(what: string, why: string): void {
    this.skipped.push({ what, why });
  }

  note(text: string): void {
    this.notes.push(text);
  }

  count(what: string, n = 1): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + n);
  }

  render(header: string): string {
    const lines = [header, ''];
    lines.push('Imported:');
    for (const [k, v] of this.counts) lines.push(`  ${k}: ${v}`);
    if (this.notes.length) {
      lines.push('', 'Notes:');
      for (const n of this.notes) lines.push(`  - ${n}`);
    }
    lines.push('', `Not taken (${this.skipped.length}):`);
    for (const s of this.skipped) lines.push(`  - ${s.what}: ${s.why}`);
    return lines.join('\n') + '\n';
  }
}
