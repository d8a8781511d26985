// `nodelet completion bash|zsh`: the script is generated from the command tree, and real bash
// completes commands, subcommands and flags at any depth with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProgram } from '../main.js';
import { bashCompletion, completionTree, zshCompletion } from './completion.js';

/** What bash offers for the words typed so far (the last one is being completed). */
function complete(script: string, words: string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-completion-'));
  try {
    const file = join(dir, 'nodelet.bash');
    writeFileSync(file, script);
    const arr = words.map((w) => `'${w}'`).join(' ');
    const out = execFileSync('bash', ['--norc', '-c', `source ${file}; COMP_WORDS=(${arr}); COMP_CWORD=${words.length - 1}; _nodelet; printf '%s\\n' "\${COMPREPLY[@]}"`], { cwd: dir, encoding: 'utf8' });
    return out.split('\n').filter(Boolean).sort();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the tree holds every command, including the ones bin/nodelet routes elsewhere', () => {
  const names = completionTree(buildProgram()).map((n) => n.path);
  for (const p of ['nodelet', 'nodelet hollow', 'nodelet agent', 'nodelet cri', 'nodelet cri update', 'nodelet node info', 'nodelet completion', 'nodelet lab']) assert.ok(names.includes(p), p);
});

test('bash completes commands, subcommands and flags from the tree', () => {
  const script = bashCompletion(buildProgram());
  assert.deepEqual(complete(script, ['nodelet', 'hol']), ['hollow']);
  assert.deepEqual(complete(script, ['nodelet', 'cri', 'up']), ['update']);
  assert.deepEqual(complete(script, ['nodelet', 'cri', '-r', 'unix:///x.sock', 'metric']), ['metricdescs', 'metricsp'], 'a flag value is not a command');
  assert.deepEqual(complete(script, ['nodelet', 'cri', 'update', '--cpu']), ['--cpu-period', '--cpu-quota', '--cpu-share', '--cpuset-cpus', '--cpuset-mems']);
  assert.deepEqual(complete(script, ['nodelet', 'node', 'info', '--o']), ['--output']);
  assert.ok(complete(script, ['nodelet', '']).includes('doctor'));
  assert.ok(complete(script, ['nodelet', 'doctor', '--']).includes('--no-inventory'));
});

test('zsh gets the same function through bashcompinit', () => {
  const z = zshCompletion(buildProgram());
  assert.match(z, /^#compdef nodelet\n/);
  assert.match(z, /autoload -U \+X bashcompinit && bashcompinit\n/);
  assert.match(z, /complete -o default -F _nodelet nodelet\n$/);
});

test('zsh completes through the script in an interactive shell (skipped without zsh)', (t) => {
  try {
    execFileSync('zsh', ['-f', '-c', 'true']);
  } catch {
    return t.skip('zsh is not installed');
  }
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-completion-zsh-'));
  try {
    writeFileSync(join(dir, '_nodelet'), zshCompletion(buildProgram()));
    // A terminal (zpty) running an interactive zsh: source the script, type `nodelet cri upd<TAB>`
    // and read until the line shows the completion. `${:-LOA}DED` keeps the echo of the typed
    // command from matching what it prints.
    const script = [
      'zmodload zsh/zpty',
      'zpty z "zsh -f -i"',
      `zpty -w z 'PS1="> "; source ${join(dir, '_nodelet')}; print -r -- \${:-LOA}DED'`,
      "zpty -r z out '*LOADED*'",
      "zpty -w -n z $'nodelet cri upd\\t'",
      "zpty -r z out '*cri update*' && print -r -- COMPLETED",
      'zpty -d z',
    ].join('\n');
    const out = execFileSync('zsh', ['-f', '-c', script], { encoding: 'utf8', timeout: 20_000 });
    assert.match(out, /COMPLETED/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
