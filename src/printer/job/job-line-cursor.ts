// The job file's lines as the streamer walks them: the batch being sent, the next one read ahead, the one before it (to count back past a batch boundary), and each line's end offset.

/** A batch of job lines; `ends[i]` is the byte offset just after line i (progress and recovery position). */
export interface JobLineBatch {
  lines: string[];
  ends: number[];
}

export type JobLineSource = AsyncIterable<JobLineBatch>;

export interface JobLineCursorEvents {
  /** The current batch's last line was taken (once per batch, before the next batch's first line). */
  batchEnded(): void;
  /** A read finished (a batch or the end of the file): lines may be there now. */
  arrived(): void;
  failed(err: Error): void;
}

export class JobLineCursor {
  /** The byte offset after the line `next()` returned last. */
  end = 0;
  private batch: JobLineBatch | null = null;
  private idx = 0;
  private nextBatch: JobLineBatch | null = null;
  private prevBatch: JobLineBatch | null = null;
  /** batchEnded was told for the end of `batch`. */
  private told = false;
  private fetching = false;
  private eof = false;
  private closed = false;
  private readonly iter: AsyncIterator<JobLineBatch>;

  constructor(source: JobLineSource, private readonly events: JobLineCursorEvents) {
    this.iter = source[Symbol.asyncIterator]();
  }

  /** The file's next line, or null when none is read yet (a read is under way then) or the file is over (`atEnd`). */
  next(): string | null {
    for (;;) {
      const b = this.batch;
      if (b !== null && this.idx < b.lines.length) {
        const i = this.idx++;
        // Half-way through a batch the next one is read, so the streamer does not wait at the boundary.
        if (this.idx === b.lines.length >> 1 && this.nextBatch === null) this.prefetch();
        this.end = b.ends[i];
        return b.lines[i];
      }
      if (b !== null && !this.told) {
        this.told = true;
        this.events.batchEnded();
      }
      if (this.nextBatch === null) {
        // An exhausted batch stays until the next one comes: positionBack still counts back through its lines.
        this.prefetch();
        return null;
      }
      if (b !== null) this.prevBatch = b;
      this.batch = this.nextBatch;
      this.nextBatch = null;
      this.idx = 0;
      this.told = false;
      this.prefetch();
    }
  }

  /** Every line was taken and the file has no more. */
  get atEnd(): boolean { return this.eof && !this.fetching && this.nextBatch === null && (this.batch === null || this.idx >= this.batch.lines.length); }

  /** Starts reading ahead (the first batch); reads go on by themselves as lines are taken. */
  prefetch(): void {
    if (this.fetching || this.eof || this.nextBatch !== null || this.closed) return;
    this.fetching = true;
    this.iter.next().then((r) => {
      this.fetching = false;
      if (this.closed) return;
      if (r.done) this.eof = true;
      else this.nextBatch = r.value;
      this.events.arrived();
    }, (err: unknown) => {
      this.fetching = false;
      if (!this.closed) this.events.failed(err as Error);
    });
  }

  /** No more reads; the source is told to let go of its file. */
  close(): void {
    this.closed = true;
    void this.iter.return?.()?.catch(() => {});
  }

  /**
   * Byte offset just after the file line `back` command lines before the last one taken (blank and comment-only lines
   * are not sent, so they are not counted); `current` when `back` is 0 and nothing was taken yet. Null when the lines
   * that far back are no longer held.
   */
  positionBack(back: number, current: number): number | null {
    // The held lines as one sequence: prevBatch then batch (null only before the first batch).
    const prev = this.prevBatch;
    const cur = this.batch;
    const prevLen = prev ? prev.lines.length : 0;
    let j = prevLen + (cur ? this.idx : 0) - 1;
    const at = (k: number): JobLineBatch | null => (k < prevLen ? prev : cur);
    const local = (k: number): number => (k < prevLen ? k : k - prevLen);
    if (j < 0) return back === 0 ? current : null;
    for (let left = back; left > 0; j--) {
      if (j < 0) return null;
      const b = at(j)!;
      if (isCommandLine(b.lines[local(j)])) left--;
    }
    if (j < 0) return null;
    const b = at(j)!;
    return b.ends[local(j)];
  }
}

/** A line the engine sends: something left once the comment is cut off. */
function isCommandLine(line: string): boolean {
  const semi = line.indexOf(';');
  return (semi === -1 ? line : line.slice(0, semi)).trim().length > 0;
}
