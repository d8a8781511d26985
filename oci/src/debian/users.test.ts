import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasCode } from '@nodelet/base';
import { addSystemAccounts, lookupIds } from './users.js';

const BASE = { passwd: 'root:*:0:0:root:/root:/bin/sh\nnobody:*:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n', group: 'root:*:0:\nusers:*:100:\nnogroup:*:65534:\n' };

test('system accounts: groups, then users with a group of their own at the first id free as both uid and gid; existing lines kept', () => {
  const files = addSystemAccounts(BASE, {
    groups: ['ssl-cert'],
    users: [{ name: 'postgres', home: '/var/lib/postgresql', shell: '/bin/bash', gecos: 'PostgreSQL administrator,,,', groups: ['ssl-cert'] }],
  });
  assert.equal(files.passwd, `${BASE.passwd}postgres:*:102:102:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n`);
  assert.equal(files.group, `${BASE.group}ssl-cert:*:101:postgres\npostgres:*:102:\n`);
  assert.deepEqual(lookupIds(files, 'postgres', 'ssl-cert'), { uid: 102, gid: 101 });
  assert.deepEqual(addSystemAccounts(files, { groups: ['ssl-cert'], users: [{ name: 'postgres', home: '/', shell: '/bin/sh', gecos: '' }] }), files, 'present accounts are left alone, as adduser --system does');
});

test('system accounts: unknown supplementary group, a clashing group and unknown names are errors that name them', () => {
  assert.throws(() => addSystemAccounts(BASE, { users: [{ name: 'pg', home: '/', shell: '/bin/sh', gecos: '', groups: ['nope'] }] }), /cannot add "pg" to group "nope": no such group/);
  assert.throws(() => addSystemAccounts(BASE, { users: [{ name: 'users', home: '/', shell: '/bin/sh', gecos: '' }] }), /a group of that name exists already/);
  assert.throws(() => lookupIds(BASE, 'postgres', 'root'), (err: Error) => hasCode(err, 'ERR_NOT_FOUND') && /no user "postgres" in the image's \/etc\/passwd/.test(err.message));
});
