/**
 * RFC 6902 JSON patch with kube-apiserver's bounds: at most 10,000 operations (413), and the
 * values `copy` operations duplicate may add up to at most the request body limit (422, as
 * json-patch's AccumulatedCopySizeLimit, which kube-apiserver sets from its JSONPatchMaxCopyBytes
 * of 3 MiB). Without the second bound a small body of `copy` operations that each copy a subtree
 * into itself doubles the object per operation: forty of them froze the server for seconds and
 * took gigabytes (docs/security.md, "Request and object bounds").
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
  for (const [index, op] of ops.entries()) {
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
      document = jsonpatch.applyOperation(document, op as jsonpatch.Operation, true, true, true, index).newDocument;
    } catch (err) {
      const name = (err as { name?: string }).name ?? '';
      if (name === 'TEST_OPERATION_FAILED') throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: json patch test operation failed`);
      throw badRequest(`the server rejected our request due to an error in our request: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return document;
}

/** Encoded size of the value at `from`; 0 when there is none (the operation itself then fails). */
function copySize(document: unknown, from: string): number {
  let value: unknown;
  try {
    value = jsonpatch.getValueByPointer(document, from);
  } catch {
    // A pointer that does not resolve copies nothing; applyOperation reports it.
    return 0;
  }
  if (value === undefined) return 0;
  try {
    return Buffer.byteLength(JSON.stringify(value));
  } catch (err) {
    // An earlier copy nested the document past what can be encoded: it could not be stored.
    if (err instanceof RangeError) throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: the copied value is nested too deeply`);
    throw err;
  }
}
