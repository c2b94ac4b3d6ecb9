// One operation at a time, in the order asked for: for check-then-act sequences that must not interleave.

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `op` once every operation asked for before it has settled; its result or error is the caller's. */
  run<T>(op: () => Promise<T>): Promise<T> {
    const result = this.tail.then(op);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
