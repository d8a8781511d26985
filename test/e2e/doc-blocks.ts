/**
 * The fenced `sh` blocks of README.md and docs/*.md, for the docs test (docs.itest.ts) and its
 * coverage check (doc-blocks.test.ts). A block is run by the docs test unless an HTML comment on
 * the line before it says otherwise:
 *
 *   <!-- docs-test: skip (why: needs a second machine, destroys the lab, …) -->
 *   <!-- docs-test: todo -->      not run yet; counted and listed by the docs test
 *
 * A block's commands are its lines, a line ending in `\` joined with the next. A command whose
 * comment says `prints <word>` must print that word (the expected output the doc shows).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

export interface DocCommand {
  /** 1-based line in the doc where the command starts. */
  line: number;
  text: string;
  /** What the output must contain (`prints <word>` in the command's comment). */
  expect?: string;
}

export interface DocBlock {
  /** Path relative to the repository root. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  mark: { kind: 'skip' | 'todo'; why: string } | undefined;
  commands: DocCommand[];
}

const MARK = /^<!--\s*docs-test:\s*(skip|todo)\b\s*(.*?)\s*-->\s*$/;

/** The `sh` blocks of one Markdown file (`file` relative to the repository root). */
export function shBlocks(file: string): DocBlock[] {
  const lines = readFileSync(join(REPO_ROOT, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^(\s*)```(\S*)/.exec(lines[i]!);
    if (!fence) continue;
    let end = i + 1;
    while (end < lines.length && !/^\s*```\s*$/.test(lines[end]!)) end++;
    if (fence[2] === 'sh') {
      const m = i > 0 ? MARK.exec(lines[i - 1]!.trim()) : null;
      blocks.push({ file, line: i + 1, mark: m ? { kind: m[1] as 'skip' | 'todo', why: m[2]! } : undefined, commands: commandsOf(lines.slice(i + 1, end), i + 2) });
    }
    i = end;
  }
  return blocks;
}

function commandsOf(body: string[], firstLine: number): DocCommand[] {
  const out: DocCommand[] = [];
  let cur: DocCommand | undefined;
  body.forEach((raw, k) => {
    if (!cur) {
      if (!raw.trim() || raw.trim().startsWith('#')) return;
      cur = { line: firstLine + k, text: raw };
    } else {
      cur.text += `\n${raw}`;
    }
    if (!raw.trimEnd().endsWith('\\')) {
      const expect = /#.*\bprints (\S+?)[.,:;)]?(?:\s|$)/.exec(raw)?.[1];
      out.push(expect ? { ...cur, expect } : cur);
      cur = undefined;
    }
  });
  return out;
}

/** README.md, then docs/*.md in name order. */
export function docFiles(): string[] {
  return ['README.md', ...readdirSync(join(REPO_ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
}

/** Every `sh` block of every doc. */
export function allBlocks(): DocBlock[] {
  return docFiles().flatMap(shBlocks);
}
