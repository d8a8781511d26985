// Runs `nodelet cri` commands in-process against FakeCriServer (a real gRPC server on a temp socket),
// with output captured through `io`; shared by the cri command tests.
import type { TestContext } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Command } from 'commander';
import { FakeCriServer } from '@nodelet/cri-client/testing';
import { register } from '../../cri.js';
import { io } from '../context.js';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `nodelet cri -r <fake> …globals …args` like bin/nodelet would (errors → one line, exit 1); `watch.stdout` follows the output. */
export async function run(fake: FakeCriServer, args: string[], globals: string[] = [], watch?: { stdout: string }): Promise<Run> {
  const program = new Command('nodelet').exitOverride().enablePositionalOptions();
  register(program);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let o = '';
  let e = '';
  stdout.on('data', (d: Buffer) => {
    o += d.toString();
    // For commands that run until interrupted: the test sees the output so far.
    if (watch) watch.stdout = o;
  });
  stderr.on('data', (d: Buffer) => (e += d.toString()));
  const saved = { ...io };
  io.stdout = stdout;
  io.stderr = stderr;
  let code = 0;
  try {
    await program.parseAsync(['cri', '-r', fake.endpoint, ...globals, ...args], { from: 'user' });
    code = typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    code = 1;
    e += `nodelet: ${(err as Error).message}\n`;
  } finally {
    Object.assign(io, saved);
    process.exitCode = undefined;
  }
  await new Promise((r) => setImmediate(r));
  return { code, stdout: o, stderr: e };
}

/** A fake runtime with busybox, and a pod (pod.json) and container (ctr.yaml) config in a temp dir. */
export async function setup(t: TestContext) {
  const fake = await FakeCriServer.start();
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-cri-cmd-'));
  t.after(async () => {
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });
  fake.runtime.addImage('127.0.0.1:5000/busybox:latest', 2_130_686);
  const podFile = join(dir, 'pod.json');
  await writeFile(podFile, JSON.stringify({ metadata: { name: 'web', namespace: 'default', uid: 'u1' }, log_directory: join(dir, 'logs'), labels: { 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'default', tier: 'front' } }));
  const ctrFile = join(dir, 'ctr.yaml');
  await writeFile(ctrFile, 'metadata: {name: app}\nimage: {image: 127.0.0.1:5000/busybox:latest}\nlog_path: app.log\nlabels: {io.kubernetes.pod.name: web, io.kubernetes.pod.namespace: default}\n');
  return { fake, dir, podFile, ctrFile };
}
