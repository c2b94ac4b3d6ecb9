// Files read by something other than a print (an SD transfer): counted per path, so they are not moved or deleted meanwhile.

export class FileHolds {
  /** How many readers hold each path. */
  private readonly held = new Map<string, number>();

  /** Marks `path` held until the returned release is called (once; more calls do nothing). */
  hold(path: string): () => void {
    this.held.set(path, (this.held.get(path) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.held.get(path) ?? 1) - 1;
      if (n > 0) this.held.set(path, n);
      else this.held.delete(path);
    };
  }

  has(path: string): boolean {
    return this.held.has(path);
  }
}
