// Loaders for state that several triggers refresh at once (push events, user actions), whose answers can cross.

/**
 * A loader whose answer is applied unless the answer of a later call was applied already: answers can arrive out of
 * order, and an older one still counts when the newest call fails.
 */
export function newestWins<T>(fetch: () => Promise<T>, apply: (value: T) => void): () => Promise<void> {
  let calls = 0;
  let applied = 0;
  return async () => {
    const mine = ++calls;
    const value = await fetch();
    if (mine > applied) {
      applied = mine;
      apply(value);
    }
  };
}
