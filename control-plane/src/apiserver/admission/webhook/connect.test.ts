// The connect options a CONNECT webhook sees, and a mutation of them written back into the query the agent gets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { optionsOf, writeBack } from './connect.js';

test('exec and portforward queries become their options objects and back', () => {
  const q = new URLSearchParams('command=sh&command=-c&command=id&stdin=true&stdout=1&container=c');
  const exec = optionsOf('exec', q);
  assert.deepEqual({ ...exec, metadata: undefined }, { metadata: undefined, stdin: true, stdout: true, stderr: false, tty: false, container: 'c', command: ['sh', '-c', 'id'] });
  // What a mutating webhook would do: another command, no stdin, another container.
  writeBack('exec', { ...exec, command: ['true'], stdin: false, container: 'sidecar' }, q);
  assert.equal(q.toString(), 'stdout=true&container=sidecar&command=true');
  const pf = new URLSearchParams('ports=8080&ports=9090');
  assert.deepEqual(optionsOf('portforward', pf).ports, [8080, 9090]);
  writeBack('portforward', { metadata: {}, ports: [7070] }, pf);
  assert.equal(pf.toString(), 'ports=7070');
  assert.equal(optionsOf('attach', new URLSearchParams('tty=true')).command, undefined);
});
