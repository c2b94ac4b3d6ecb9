// Loaders for state that several triggers refresh at once (push events, user actions), whose answers can cross.

/**
 * A loader whose answer is applied unless the answer of a later call was applied already: answers can arrive out of
 * order, and an older one still counts when the newest call fails.
 */
export function newestWins<T, A extends unknown[] = []>(fetch: (...args: A) => Promise<T>, apply: (value: T) => void): (...args: A) => Promise<void> {
  let calls = 0;
  let applied = 0;
  return async (...args: A) => {
    const mine = ++calls;
    const value = await fetch(...args);
    if (mine > applied) {
      applied = mine;
      apply(value);
    }
  };
}
