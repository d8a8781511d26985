import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_ADMIN_KUBECONFIG, defaultAdminKubeconfig, parseTtl } from './token.js';

test('the admin kubeconfig defaults to $KUBECONFIG (its first file, as kubectl reads it), else the server’s', () => {
  assert.equal(defaultAdminKubeconfig({}), DEFAULT_ADMIN_KUBECONFIG);
  assert.equal(defaultAdminKubeconfig({ KUBECONFIG: '/lab/admin.kubeconfig' }), '/lab/admin.kubeconfig');
  assert.equal(defaultAdminKubeconfig({ KUBECONFIG: ':/a:/b' }), '/a');
  assert.equal(defaultAdminKubeconfig({ KUBECONFIG: '' }), DEFAULT_ADMIN_KUBECONFIG);
});

test('token TTLs take s, m, h and d', () => {
  assert.equal(parseTtl('90s'), 90_000);
  assert.equal(parseTtl('24h'), 86_400_000);
  assert.throws(() => parseTtl('1w'));
});
