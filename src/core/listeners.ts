// A listener list for a service's `onX(fn)` methods: add returns the removal, emit calls every listener in order.

export class Listeners<A extends unknown[]> {
  private list: Array<(...args: A) => void> = [];

  /** With `onError`, a listener that throws is reported there and the others still run; without, the throw propagates. */
  constructor(private readonly onError?: (err: unknown) => void) {}

  /** Adds a listener; returns the function that removes it (removing during an emit leaves that emit as it was). */
  add(fn: (...args: A) => void): () => void {
    this.list.push(fn);
    return () => { this.list = this.list.filter((l) => l !== fn); };
  }

  emit(...args: A): void {
    for (const l of this.list) {
      if (!this.onError) {
        l(...args);
        continue;
      }
      try {
        l(...args);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
