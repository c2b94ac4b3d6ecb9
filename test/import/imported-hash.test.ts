// OctoPrint password hashes: each form checks its password, rejects others, and malformed strings verify nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, pbkdf2Sync } from 'node:crypto';
import { hash as argon2Hash } from '@node-rs/argon2';
import { verifyPassword, isOwnHash, hashPassword } from '../../src/access/password.ts';
import { legacySha512Hash } from '../../src/access/imported-hash.ts';

const ab64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '').replace(/\+/g, '.');

test('argon2id, PBKDF2-SHA256 and salted SHA-512 verify; wrong passwords and malformed hashes do not', async () => {
  // Small Argon2 parameters keep the test fast; the PHC string carries them.
  const argon = await argon2Hash('pw-argon', { memoryCost: 1024, timeCost: 1, parallelism: 1, algorithm: 2 });
  const salt = Buffer.from('0123456789abcdef');
  const pbkdf2 = `$pbkdf2-sha256$1000$${ab64(salt)}$${ab64(pbkdf2Sync('pw-pbkdf2', salt, 1000, 32, 'sha256'))}`;
  const legacy = legacySha512Hash('s$a:l/t', createHash('sha512').update('pw-legacy' + 's$a:l/t').digest('hex'));
  for (const [stored, right] of [[argon, 'pw-argon'], [pbkdf2, 'pw-pbkdf2'], [legacy, 'pw-legacy']]) {
    assert.equal(await verifyPassword(right, stored), true, stored);
    assert.equal(await verifyPassword(right + 'x', stored), false, stored);
    assert.equal(isOwnHash(stored), false);
  }
  for (const bad of ['$argon2id$v=19$m=1024,t=1,p=1$garbage', '$pbkdf2-sha256$x$abc$def', '$pbkdf2-sha256$1000$$', 'octoprint-sha512$c2FsdA$zz',
    `$pbkdf2-sha256$99999999999$${ab64(salt)}$${ab64(salt)}`, '', 'plain']) {
    assert.equal(await verifyPassword('pw', bad), false, bad);
  }
  assert.equal(isOwnHash(await hashPassword('x')), true);
});
