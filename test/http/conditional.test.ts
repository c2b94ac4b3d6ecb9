// If-None-Match against an entity tag: lists, weak tags and `*`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { etagMatches } from '../../src/http/conditional.ts';

test('If-None-Match matches the tag alone, in a list, weak, or as *; nothing else', () => {
  const etag = '"abc"';
  for (const header of ['"abc"', ' "abc" ', '"x", "abc"', '"x","abc"', 'W/"abc"', '"x", W/"abc"', '*', ' * ']) {
    assert.equal(etagMatches(header, etag), true, header);
  }
  for (const header of [undefined, '', '"ab"', 'abc', '"abc', 'W/"ab"', '"x", "y"', '**', 'W/*']) {
    assert.equal(etagMatches(header, etag), false, String(header));
  }
});
