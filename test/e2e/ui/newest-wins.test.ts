// Unit tests of the UI's loader for answers that cross (web/src/lib/newest-wins.ts): a listing started before a change
// must not overwrite one started after it, and a failed newest call must not throw away an older good answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newestWins } from '../../../web/src/lib/newest-wins.ts';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

/** Two calls of one loader whose answers the test hands out in the order it likes; `shown` is what got applied. */
function twoCalls() {
  const answers = [deferred<string>(), deferred<string>()];
  let n = 0;
  const shown: string[] = [];
  const load = newestWins(() => answers[n++].promise, (v) => shown.push(v));
  const older = load();
  const newer = load();
  return { answers, shown, older, newer };
}

test('an answer that arrives after a newer one was applied is dropped', async () => {
  const { answers, shown, older, newer } = twoCalls();
  answers[1].resolve('after the change');
  await newer;
  answers[0].resolve('before the change');
  await older;
  assert.deepEqual(shown, ['after the change']);
});

test('answers in order are all applied, the newest last', async () => {
  const { answers, shown, older, newer } = twoCalls();
  answers[0].resolve('old');
  await older;
  answers[1].resolve('new');
  await newer;
  assert.deepEqual(shown, ['old', 'new']);
});

test('when the newest call fails, an older answer still counts', async () => {
  const { answers, shown, older, newer } = twoCalls();
  answers[1].reject(new Error('network'));
  await assert.rejects(newer, /network/);
  answers[0].resolve('older but good');
  await older;
  assert.deepEqual(shown, ['older but good']);
});
