// Re-authentication notices for the push channel: logout, stale session, user modified or removed, guest rights changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import type { ReauthNotice } from '../../src/access/access-service.ts';
import { addUser, browserLogin, asBrowser, OffsetClock } from './helpers.ts';

test('the access service announces who must authenticate again and why', async (t) => {
  const clock = new OffsetClock();
  const s = await startTestServer(t, { clock });
  await addUser(s, 'bob', 'pw-bob');
  const notices: ReauthNotice[] = [];
  s.access.onReauthRequired((n) => notices.push(n));

  const { jar, body } = await browserLogin(s, 'bob', 'pw-bob');
  await asBrowser(s, jar, '/api/logout', { method: 'POST' });
  assert.deepEqual(notices.splice(0), [{ user: 'bob', session: body.session, reason: 'logout' }]);

  const again = await browserLogin(s, 'bob', 'pw-bob');
  clock.advance(s.config.current.accessControl.sessionValidityHours * 3_600_000 + 1_000);
  assert.equal(s.access.identityForSession(String(again.body.session)), undefined);
  assert.deepEqual(notices.splice(0), [{ user: 'bob', session: again.body.session, reason: 'stale' }]);

  await s.api('/api/access/users/bob', { method: 'PUT', json: { groups: ['readonly'] } });
  assert.deepEqual(notices.splice(0), [{ user: 'bob', reason: 'modified' }]);

  await s.api('/api/access/groups/guests', { method: 'PUT', json: { permissions: ['STATUS'] } });
  assert.deepEqual(notices.splice(0), [{ user: undefined, reason: 'modified' }]);

  await s.api('/api/access/users/bob', { method: 'DELETE' });
  assert.deepEqual(notices.splice(0), [{ user: 'bob', reason: 'removed' }]);
});
