/**
 * Patch application for the in-memory test server only: RFC 7386 merge patch and the RFC 6902
 * operations clients actually send. (The real server has full strategic-merge support.)
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'test' | 'move' | 'copy';
  path: string;
  value?: unknown;
  from?: string;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new Error(`invalid JSON pointer "${path}"`);
  return path.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function parentOf(doc: unknown, parts: string[]): { parent: Record<string, unknown> | unknown[]; key: string } {
  let cur: unknown = doc;
  for (const p of parts.slice(0, -1)) {
    if (typeof cur !== 'object' || cur === null) throw new Error(`path segment "${p}" does not exist`);
    cur = (cur as Record<string, unknown>)[p];
  }
  if (typeof cur !== 'object' || cur === null) throw new Error('parent of patch target does not exist');
  return { parent: cur as Record<string, unknown>, key: parts[parts.length - 1] ?? '' };
}

/** Applies RFC 6902 operations to a copy of `doc`; throws on a failed `test` or a missing path. */
export function jsonPatch(doc: unknown, ops: readonly JsonPatchOp[]): unknown {
  let root = structuredClone(doc);
  for (const op of ops) {
    const parts = pointer(op.path);
    if (parts.length === 0) {
      if (op.op === 'test') {
        if (JSON.stringify(root) !== JSON.stringify(op.value)) throw new Error('test operation failed');
        continue;
      }
      root = structuredClone(op.value);
      continue;
    }
    const { parent, key } = parentOf(root, parts);
    const arr = Array.isArray(parent) ? parent : undefined;
    const idx = arr ? (key === '-' ? arr.length : Number(key)) : -1;
    switch (op.op) {
      case 'add':
        if (arr) arr.splice(idx, 0, structuredClone(op.value));
        else (parent as Record<string, unknown>)[key] = structuredClone(op.value);
        break;
      case 'replace':
      case 'remove': {
        const exists = arr ? idx >= 0 && idx < arr.length : Object.prototype.hasOwnProperty.call(parent, key);
        if (!exists) throw new Error(`path "${op.path}" does not exist`);
        if (op.op === 'remove') {
          if (arr) arr.splice(idx, 1);
          else delete (parent as Record<string, unknown>)[key];
        } else if (arr) arr[idx] = structuredClone(op.value);
        else (parent as Record<string, unknown>)[key] = structuredClone(op.value);
        break;
      }
      case 'test': {
        const cur = arr ? arr[idx] : (parent as Record<string, unknown>)[key];
        if (JSON.stringify(cur) !== JSON.stringify(op.value)) throw new Error(`test operation on "${op.path}" failed`);
        break;
      }
      default:
        throw new Error(`unsupported JSON patch operation "${op.op}"`);
    }
  }
  return root;
}
