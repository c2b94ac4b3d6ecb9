// Test helper: the one polling wait (for state only visible by asking) and waits on the server's own events.
import { readFile } from 'node:fs/promises';
import type { EventBus } from '../../src/core/event-bus.ts';
import type { EventMap, EventName } from '../../src/core/events.ts';

export interface WaitOptions {
  /** Give up (and throw, naming `what`) after this long; generous, since a loaded CI machine is slow, not wrong. */
  timeoutMs?: number;
  /** Pause between polls. */
  intervalMs?: number;
}

/**
 * Polls `fn` until it returns something other than undefined, null or false, and resolves to that value; throws
 * `timed out waiting for <what>` after the timeout (a number is taken as the timeout in ms).
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  opts: WaitOptions | number = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 20 } = typeof opts === 'number' ? { timeoutMs: opts } : opts;
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

let owners = 0;

/**
 * Resolves with the payload of the next `name` event on the bus that `match` accepts (listening starts now, so call it
 * before the action that raises the event); rejects after the timeout.
 */
export function nextEvent<K extends EventName>(
  events: EventBus,
  name: K,
  match: (payload: EventMap[K]) => boolean = () => true,
  timeoutMs = 30_000,
): Promise<EventMap[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`timed out waiting for the ${name} event`)); }, timeoutMs);
    const off = events.on(`test-next-event-${++owners}`, name, (payload) => {
      if (!match(payload)) return;
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}

/** The text of `path` once it exists and `complete` accepts it (a writer may be half-way: ask for the final newline). */
export function waitForFile(path: string, complete: (text: string) => boolean = () => true, timeoutMs = 30_000): Promise<string> {
  return waitFor(`${path}`, async () => {
    const text = await readFile(path, 'utf8').catch(() => undefined);
    return text !== undefined && complete(text) ? text : undefined;
  }, { timeoutMs, intervalMs: 25 });
}
