/**
 * Checks of paths that end up joined under a volume directory on the node: `subPath`,
 * `subPathExpr`, configMap/secret `items[].path` (k8s.io/kubernetes/pkg/apis/core/validation
 * validateLocalDescendingPath, validatePathNoBacksteps, ValidateLocalNonReservedPath). The
 * messages are the apiserver's. The agent runs the same checks again before it touches the disk
 * (static pods never pass the API server).
 */
import { invalidValue, type FieldError } from './field-error.js';

/** Why `p` contains a `..` element, or undefined. Node paths are POSIX: '/' is the only separator. */
export function backstepProblem(p: string): string | undefined {
  return p.split('/').includes('..') ? "must not contain '..'" : undefined;
}

/** Problems of `p` as a relative path that stays below its base (no leading '/', no '..' element). */
export function localDescendingPathProblems(p: string): string[] {
  const out: string[] = [];
  if (p.startsWith('/')) out.push('must be a relative path');
  const back = backstepProblem(p);
  if (back) out.push(back);
  return out;
}

/**
 * As {@link localDescendingPathProblems}, and the first element may not start with `..`: names
 * such as `..data` are the atomic writer's own (docs/agent.md, volumes).
 */
export function localNonReservedPathProblems(p: string): string[] {
  const out = localDescendingPathProblems(p);
  // One message is enough when the '..' check already fired.
  if (p.startsWith('..') && !p.startsWith('../')) out.push("must not start with '..'");
  return out;
}

export function validatePathNoBacksteps(p: string, field: string): FieldError[] {
  const back = backstepProblem(p);
  return back ? [invalidValue(field, p, back)] : [];
}

export function validateLocalDescendingPath(p: string, field: string): FieldError[] {
  return localDescendingPathProblems(p).map((why) => invalidValue(field, p, why));
}

export function validateLocalNonReservedPath(p: string, field: string): FieldError[] {
  return localNonReservedPathProblems(p).map((why) => invalidValue(field, p, why));
}
