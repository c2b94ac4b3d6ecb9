import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normaliseApiPath } from './api-path.ts';

test('normaliseApiPath: dot segments, encoded dots, backslashes and double slashes resolved before the /api/ rule', () => {
  for (const [raw, want] of [
    ['/api/version', '/api/version'],
    ['/api', '/api'],
    ['/api/./version', '/api/version'],
    ['/api/files/../version?x=1', '/api/version?x=1'],
    ['/api//files///local', '/api/files/local'],
    ['/api\\files\\local', '/api/files/local'],
    ['/api/files/local/a%25b.gcode', '/api/files/local/a%25b.gcode'],
    ['/api/files/local/.hidden..gcode', '/api/files/local/.hidden..gcode'],
  ]) assert.equal(normaliseApiPath(raw), want, raw);
  for (const raw of ['/api/../downloads/logs/x.log', '/api/%2e%2e/downloads', '/api/%2E./x', '/api/..\\x', '//api/../x',
    '\\\\host\\api', '/apix', '/', 'api/version', '', '/api/\tx', '/api/a%2f..%2f..%2fx', '/api/%zz', 5, null, '/api/' + 'a'.repeat(5000)]) {
    assert.equal(normaliseApiPath(raw), undefined, String(raw));
  }
});
