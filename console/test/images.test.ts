// The create form's image list (console/src/images.tsx): what it offers from the registry's
// catalogue and the nodes' images, how typing filters it, and the combobox's keys.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterChoices, imageChoices, listKey } from '../src/images.js';
import type { Node } from '../src/k8s.js';

const node = (name: string, images: string[][]): Node => ({ metadata: { name }, status: { images: images.map((names) => ({ names })) } });

test('the registry catalogue first, then node images by how many nodes hold them; digests and <none> left out', () => {
  const nodes = [
    node('a', [['127.0.0.1:5000/busybox@sha256:aa', '127.0.0.1:5000/busybox:latest'], ['nginx:1.25', 'nginx:1.25'], ['<none>@<none>', '<none>:<none>']]),
    node('b', [['nginx:1.25'], ['redis:7'], ['127.0.0.1:5000/pause:3.9']]),
  ];
  assert.deepEqual(imageChoices(['127.0.0.1:5000/busybox:latest', '127.0.0.1:5000/pause:3.9', '127.0.0.1:5000/web:v1'], nodes), [
    { ref: '127.0.0.1:5000/busybox:latest', registry: true, nodes: 1 },
    { ref: '127.0.0.1:5000/pause:3.9', registry: true, nodes: 1 },
    { ref: '127.0.0.1:5000/web:v1', registry: true, nodes: 0 },
    { ref: 'nginx:1.25', registry: false, nodes: 2 },
    { ref: 'redis:7', registry: false, nodes: 1 },
  ]);
  // No registry (or no right to read it): the nodes' images alone; no nodes: the catalogue alone.
  assert.deepEqual(imageChoices([], nodes).map((c) => c.ref), ['nginx:1.25', '127.0.0.1:5000/busybox:latest', '127.0.0.1:5000/pause:3.9', 'redis:7']);
  assert.deepEqual(imageChoices(['r/x:1'], []), [{ ref: 'r/x:1', registry: true, nodes: 0 }]);
  assert.deepEqual(imageChoices([], [{ metadata: { name: 'bare' } }]), []);
});

test('typing filters by substring, any case; an empty field shows everything', () => {
  const choices = imageChoices(['127.0.0.1:5000/busybox:latest', '127.0.0.1:5000/pause:3.9'], [node('a', [['docker.io/library/BusyBox:1']])]);
  assert.deepEqual(filterChoices(choices, 'busy').map((c) => c.ref), ['127.0.0.1:5000/busybox:latest', 'docker.io/library/BusyBox:1']);
  assert.deepEqual(filterChoices(choices, '  PAUSE ').map((c) => c.ref), ['127.0.0.1:5000/pause:3.9']);
  assert.equal(filterChoices(choices, '').length, 3);
  assert.deepEqual(filterChoices(choices, 'nginx'), []);
});

test('keys: ArrowDown opens on the first and wraps, ArrowUp from the last, Alt+ArrowDown opens without choosing, Enter takes, Escape closes', () => {
  assert.deepEqual(listKey('ArrowDown', false, false, -1, 3), { open: true, active: 0, handled: true });
  assert.deepEqual(listKey('ArrowDown', false, true, 0, 3), { open: true, active: 1, handled: true });
  assert.deepEqual(listKey('ArrowDown', false, true, 2, 3), { open: true, active: 0, handled: true });
  assert.deepEqual(listKey('ArrowDown', true, false, -1, 3), { open: true, active: -1, handled: true });
  assert.deepEqual(listKey('ArrowUp', false, false, -1, 3), { open: true, active: 2, handled: true });
  assert.deepEqual(listKey('ArrowUp', false, true, 0, 3), { open: true, active: 2, handled: true });
  assert.deepEqual(listKey('ArrowUp', false, true, -1, 3), { open: true, active: 2, handled: true });
  assert.deepEqual(listKey('Enter', false, true, 1, 3), { open: false, active: -1, take: true, handled: true });
  assert.deepEqual(listKey('Escape', false, true, 1, 3), { open: false, active: -1, handled: true });
  // Not the list's: Enter with nothing highlighted submits the form, Escape on a closed list, other keys type.
  assert.equal(listKey('Enter', false, true, -1, 3).handled, false);
  assert.equal(listKey('Enter', false, false, 1, 3).handled, false);
  assert.equal(listKey('Escape', false, false, -1, 3).handled, false);
  assert.equal(listKey('a', false, true, 1, 3).handled, false);
  // An empty list: the arrows highlight nothing.
  assert.deepEqual(listKey('ArrowDown', false, true, -1, 0), { open: true, active: -1, handled: true });
  assert.deepEqual(listKey('ArrowUp', false, true, -1, 0), { open: true, active: -1, handled: true });
});
