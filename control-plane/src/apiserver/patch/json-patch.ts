/**
 * RFC 6902 JSON patch with kube-apiserver's bounds: at most 10,000 operations (413), and the
 * values `copy` operations duplicate may add up to at most the request body limit (422, as
 * json-patch's AccumulatedCopySizeLimit, which kube-apiserver sets from its JSONPatchMaxCopyBytes
 * of 3 MiB). Without the second bound a small body of `copy` operations that each copy a subtree
 * into itself doubles the object per operation: forty of them froze the server for seconds and
 * took gigabytes (docs/security.md, "Request and object bounds"). Negative array indices count
 * from the end (`/spec/containers/-1`), as json-patch's SupportNegativeIndices, which
 * kube-apiserver leaves on.
 */
import jsonpatch from 'fast-json-patch';
import { isPlainObject } from '../object.js';
import { badRequest, StatusError } from '../status.js';
import { MAX_BODY_BYTES } from '../media.js';

/** kube-apiserver's maxJSONPatchOperations. */
export const MAX_JSON_PATCH_OPERATIONS = 10_000;
/** kube-apiserver's JSONPatchMaxCopyBytes (the same 3 MiB as its request body limit). */
export const MAX_JSON_PATCH_COPY_BYTES = MAX_BODY_BYTES;

/**
 * Applies `ops` to a copy of `doc` (not mutated) and returns the result. Throws 413 for too many
 * operations, 422 when copies pass the accumulated size limit or a `test` fails, 400 for an
 * operation that cannot apply. Synchronous; the work is bounded by the operation count, the
 * document and the copy limit.
 */
export function applyJsonPatch(doc: unknown, ops: readonly unknown[]): unknown {
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new StatusError(413, 'RequestEntityTooLarge', `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`);
  }
  let document = structuredClone(doc);
  let copied = 0;
  for (const [index, given] of ops.entries()) {
    const op = withPositiveIndices(document, given);
    if (isPlainObject(op) && op.op === 'copy' && typeof op.from === 'string') {
      copied += copySize(document, op.from);
      if (copied > MAX_JSON_PATCH_COPY_BYTES) {
        throw new StatusError(
          422,
          'Invalid',
          `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${MAX_JSON_PATCH_COPY_BYTES}`,
        );
      }
    }
    try {
      document = jsonpatch.applyOperation(document, op as jsonpatch.Operation, validate, true, true, index).newDocument;
    } catch (err) {
      const name = (err as { name?: string }).name ?? '';
      if (name === 'TEST_OPERATION_FAILED') throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: json patch test operation failed`);
      throw badRequest(`the server rejected our request due to an error in our request: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return document;
}

/**
 * fast-json-patch's own validation, except that `move` and `copy` check their `from` by reading
 * it: the library's check applies a copy of the operation to a deep copy of the whole document,
 * so 10,000 moves on a 1 MiB object cloned it 10,000 times.
 */
const validate: jsonpatch.Validator<unknown> = (op, index, document, existingPath) => {
  if (op.op !== 'move' && op.op !== 'copy') return jsonpatch.validator(op, index, document, existingPath);
  jsonpatch.validator(op, index);
  if (document !== undefined && valueAt(document, op.from) === undefined) {
    throw new jsonpatch.JsonPatchError('Cannot perform the operation from a path that does not exist', 'OPERATION_FROM_UNRESOLVABLE', index, op, document);
  }
};

/** The value `pointer` names in `document`, or undefined. */
function valueAt(document: unknown, pointer: string): unknown {
  try {
    return jsonpatch.getValueByPointer(document, pointer);
  } catch {
    return undefined; // a pointer through a value that is not a container names nothing
  }
}

/** Encoded size of the value at `from`; 0 when there is none (the operation itself then fails). */
function copySize(document: unknown, from: string): number {
  // A pointer that does not resolve copies nothing; applyOperation reports it.
  const value = valueAt(document, from);
  if (value === undefined) return 0;
  try {
    return Buffer.byteLength(JSON.stringify(value));
  } catch (err) {
    // An earlier copy nested the document past what can be encoded: it could not be stored.
    if (err instanceof RangeError) throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: the copied value is nested too deeply`);
    throw err;
  }
}

/** `op` with negative array indices in `path` and `from` counted from the end of their arrays. */
function withPositiveIndices(document: unknown, op: unknown): unknown {
  if (!isPlainObject(op)) return op;
  // add, copy and move insert at `path`: there -1 is the end of the array, as json-patch reads it.
  const inserts = op.op === 'add' || op.op === 'copy' || op.op === 'move';
  const path = typeof op.path === 'string' ? positivePointer(document, op.path, inserts) : op.path;
  const from = typeof op.from === 'string' ? positivePointer(document, op.from, false) : op.from;
  return path === op.path && from === op.from ? op : { ...op, path, ...(from === undefined ? {} : { from }) };
}

/**
 * `pointer` with each `-N` token that indexes an array of length L replaced by L-N (L+1-N for
 * the last token of an insertion); tokens out of range stay as they are for the operation to
 * reject. Returns `pointer` itself when nothing changed.
 */
function positivePointer(document: unknown, pointer: string, insert: boolean): string {
  if (!pointer.includes('/-')) return pointer;
  const tokens = pointer.split('/');
  let node: unknown = document;
  let changed = false;
  for (let i = 1; i < tokens.length; i++) {
    const raw = tokens[i]!;
    const length = Array.isArray(node) ? node.length + (insert && i === tokens.length - 1 ? 1 : 0) : 0;
    if (Array.isArray(node) && /^-[1-9][0-9]*$/.test(raw) && Number(raw.slice(1)) <= length) {
      tokens[i] = String(length + Number(raw));
      changed = true;
    }
    const key = tokens[i]!.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isPlainObject(node) ? node[key] : Array.isArray(node) ? node[Number(key)] : undefined;
  }
  return changed ? tokens.join('/') : pointer;
}
