// The shapes every k8s.io/api generated.proto repeats, written once: a kind is `metadata = 1`
// (apimachinery's ObjectMeta), `spec = 2`, `status = 3`. The schema files interpolate these into
// their proto text, so a message reads as upstream declares it and the field numbers stay upstream's.

/** The proto package of ObjectMeta, LabelSelector, Time (k8s.io/apimachinery pkg/apis/meta/v1). */
export const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/**
 * `message <kind>` with its metadata, and a spec and status of the given message types when set.
 * A status of `'empty'` also declares `message <kind>Status {}`: kubectl never sends a status, so
 * nodelet decodes none of its fields.
 */
export function kindMessage(kind: string, o: { spec?: string; status?: string | 'empty' } = {}): string {
  const status = o.status === 'empty' ? `${kind}Status` : o.status;
  return [
    ...(o.status === 'empty' ? [`message ${status} {}`] : []),
    `message ${kind} {`,
    `  optional ${META}.ObjectMeta metadata = 1;`,
    ...(o.spec ? [`  optional ${o.spec} spec = 2;`] : []),
    ...(status ? [`  optional ${status} status = 3;`] : []),
    '}',
  ].join('\n');
}

/** The usual top-level kind: `<kind>Spec` and an empty `<kind>Status`. */
export const specAndStatus = (kind: string): string => kindMessage(kind, { spec: `${kind}Spec`, status: 'empty' });
