// Listing JSON put together from kept entries: the same bytes as JSON.stringify of the wire entries, for any tree, and a
// file's JSON made once per entry and base URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ListingJson } from '../../src/http/listing-json.ts';
import { toWire } from '../../src/octoprint/file-entry.ts';
import type { StoredEntry, StoredFile, StoredFolder } from '../../src/files/types.ts';

const text = fc.string({ unit: 'binary', maxLength: 12 });
/** Stored metadata keys, including ones that are entry fields on the wire and names objects carry. */
const metaKey = fc.oneof(text, fc.constantFrom('children', 'name', 'refs', '__proto__', 'toString', 'thumbnail', 'userdata'));
const meta = fc.dictionary(metaKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((m) => {
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of Object.entries(m)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return { ...out };
});

const file = fc.record({
  name: text, display: text, path: text, size: fc.nat(), date: fc.nat(), hash: fc.option(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 40, maxLength: 40 }), { nil: undefined }),
  meta, origin: fc.constantFrom<'local' | 'sdcard'>('local', 'local', 'sdcard'),
}).map((f): StoredFile => ({ kind: 'file', typePath: ['machinecode', 'gcode'], ...f }));

const { tree } = fc.letrec<{ tree: StoredEntry[]; entry: StoredEntry }>((tie) => ({
  tree: fc.array(tie('entry'), { maxLength: 4 }),
  entry: fc.oneof({ depthSize: 'small', withCrossShrink: true }, file, fc.record({
    name: text, display: text, path: text, size: fc.nat(), meta, children: tie('tree'),
  }).map((f): StoredFolder => ({ kind: 'folder', origin: 'local', ...f }))),
}));

test('a listing is the bytes JSON.stringify gives for its wire entries, made afresh or from kept entries', () => {
  const json = new ListingJson();
  fc.assert(fc.property(tree, fc.constantFrom('http://h', 'http://other/prefix', ''), (entries, base) => {
    const expected = JSON.stringify(entries.map((e) => toWire(base, e)));
    assert.equal(json.render(base, entries).toString('utf8'), expected);
    assert.equal(json.render(base, entries).toString('utf8'), expected, 'again, from kept entries');
  }), { numRuns: 300 });
});

test('a local file\'s JSON is made once per entry and base URL; a new entry object is made afresh', () => {
  const json = new ListingJson();
  const entry: StoredFile = { kind: 'file', origin: 'local', name: 'a.gcode', display: 'a.gcode', path: 'a.gcode', typePath: ['machinecode', 'gcode'], size: 1, date: 2, meta: {} };
  const first = json.render('http://h', [entry]).toString();
  // Entries are never changed once made (files/local-storage.ts); this one is, to show its kept JSON is what is sent.
  entry.display = 'changed';
  assert.equal(json.render('http://h', [entry]).toString(), first, 'the same entry: its kept JSON');
  assert.match(json.render('http://other', [entry]).toString(), /"display":"changed".*"http:\/\/other\/api\/files\/local\/a\.gcode"/, 'another base: made for it');
  assert.match(json.render('http://h', [{ ...entry }]).toString(), /"display":"changed"/, 'another entry: made afresh');
});

test('entries are kept for a bounded number of base URLs, the most recent first', () => {
  const json = new ListingJson();
  const entry: StoredFile = { kind: 'file', origin: 'local', name: 'a.gcode', display: 'a.gcode', path: 'a.gcode', typePath: ['machinecode', 'gcode'], size: 1, date: 2, meta: {} };
  json.render('http://kept', [entry]);
  for (let i = 0; i < 20; i++) {
    json.render(`http://h${i}`, [entry]);
    json.render('http://kept', [entry]); // used again: stays
  }
  assert.ok((json as unknown as { byBase: Map<string, unknown> }).byBase.size <= 8);
  entry.display = 'changed';
  assert.match(json.render('http://kept', [entry]).toString(), /"display":"a\.gcode"/, 'the base in use kept its entries');
  assert.match(json.render('http://h0', [entry]).toString(), /"display":"changed"/, 'an old base was let go');
});
