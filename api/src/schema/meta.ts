/** Schemas of apimachinery's shared types: object metadata, selectors, times, quantities, conditions, delete options. */
import { bool, definitions, int32, int64, kind, listOf, obj, openObject, ref, str, strMap, strings, type JsonSchema } from './dsl.js';

export const META_SCHEMAS: Record<string, JsonSchema> = {
  ...definitions('meta', {
    ObjectMeta: obj('Metadata every persisted object has: identity, labels and annotations, ownership, and what the server records about it.', {
      name: str('Unique name within the namespace (or the cluster, for cluster-scoped kinds). Cannot be changed.'),
      generateName: str('Prefix for a name the server generates when `name` is empty; a random suffix is added.'),
      namespace: str('Namespace the object lives in; empty for cluster-scoped kinds.'),
      selfLink: str('Deprecated and no longer set.'),
      uid: str('Unique ID the server assigns at creation; a recreated object gets a new one.'),
      resourceVersion: str('Opaque version of this object, for optimistic concurrency and watches.'),
      generation: int64('Sequence number of the desired state (spec), set by the server.'),
      creationTimestamp: ref('meta.Time', 'When the server created the object.'),
      deletionTimestamp: ref('meta.Time', 'When the object will be gone; set when a delete was requested. Read-only.'),
      deletionGracePeriodSeconds: int64('Seconds the object has to terminate gracefully before it is removed. Read-only.'),
      labels: strMap('Key/value pairs that selectors match on.'),
      annotations: strMap('Key/value pairs for tools and controllers; not used for selection.'),
      ownerReferences: listOf('meta.OwnerReference', 'Objects this one depends on; the garbage collector deletes it when all of them are gone.', { type: 'map', keys: ['uid'], merge: 'uid' }),
      finalizers: strings('Keys that must all be removed before the object is deleted from storage.', { type: 'set', patch: 'merge' }),
      managedFields: listOf('meta.ManagedFieldsEntry', 'Which manager (field manager of a write) owns which fields; used by server-side apply.', { type: 'atomic' }),
    }),
    ListMeta: obj('Metadata of a list response.', {
      selfLink: str('Deprecated and no longer set.'),
      resourceVersion: str('Version of the store the list was read at; watch from it to see later changes.'),
      continue: str('Token for the next page of a paginated list; empty on the last page.'),
      remainingItemCount: int64('Items left after this page, when the server can tell.'),
    }),
    OwnerReference: obj('Points at an object’s owner, by kind, name and uid.', {
      apiVersion: str('API version of the owner.'),
      kind: str('Kind of the owner.'),
      name: str('Name of the owner.'),
      uid: str('UID of the owner.'),
      controller: bool('Marks the owner that manages this object; at most one reference may set it.'),
      blockOwnerDeletion: bool('With foreground deletion, the owner is not removed before this object is.'),
    }, { required: ['apiVersion', 'kind', 'name', 'uid'], mapType: 'atomic' }),
    ManagedFieldsEntry: obj('The fields one manager set through one kind of operation.', {
      manager: str('Name of the manager (the fieldManager of the request).'),
      operation: str('`Apply` or `Update`.'),
      apiVersion: str('API version the fields are described in.'),
      time: ref('meta.Time', 'When the manager last changed one of its fields.'),
      fieldsType: str('Format of `fieldsV1`; only `FieldsV1`.'),
      fieldsV1: ref('meta.FieldsV1', 'The set of fields, as a nested map.'),
      subresource: str('Subresource the write went to (`status`, `scale`), empty for the main resource.'),
    }),
    FieldsV1: openObject('A set of field paths in the nested-map format server-side apply uses.'),
    Time: { type: 'string', format: 'date-time', description: 'A time in RFC 3339 form, to the second.' },
    MicroTime: { type: 'string', format: 'date-time', description: 'A time in RFC 3339 form with microseconds.' },
    LabelSelector: obj('Selects objects by their labels; all requirements must hold. Empty selects everything, null nothing.', {
      matchLabels: strMap('Labels that must be present with exactly these values.'),
      matchExpressions: listOf('meta.LabelSelectorRequirement', 'Further requirements on label keys and values.', { type: 'atomic' }),
    }, { mapType: 'atomic' }),
    LabelSelectorRequirement: obj('One requirement on a label: a key, an operator and values.', {
      key: str('The label key.'),
      operator: str('`In`, `NotIn`, `Exists` or `DoesNotExist`.'),
      values: strings('Values for `In` and `NotIn`; empty for `Exists` and `DoesNotExist`.'),
    }, { required: ['key', 'operator'] }),
    Condition: obj('One aspect of an object’s current state, as a status with a reason.', {
      type: str('Kind of condition, in CamelCase.'),
      status: str('`True`, `False` or `Unknown`.'),
      observedGeneration: int64('The object generation the condition was computed for.'),
      lastTransitionTime: ref('meta.Time', 'When the status last changed.'),
      reason: str('Machine-readable reason for the last transition, in CamelCase.'),
      message: str('Human-readable details.'),
    }, { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] }),
    Preconditions: obj('Conditions a delete checks before it goes ahead.', {
      uid: str('The object must have this UID.'),
      resourceVersion: str('The object must be at this resourceVersion.'),
    }),
    DeleteOptions: obj('Options of a delete (also the body of an eviction’s delete).', {
      apiVersion: str('API version of this object.'),
      kind: str('Kind of this object.'),
      gracePeriodSeconds: int64('Seconds before the object is removed; 0 deletes at once, unset uses the kind’s default.'),
      preconditions: ref('meta.Preconditions', 'Checks made before the delete.'),
      orphanDependents: bool('Deprecated: use propagationPolicy Orphan.'),
      propagationPolicy: str('What happens to dependents: `Orphan`, `Background` or `Foreground`.'),
      dryRun: strings('`All` runs every stage without persisting anything.'),
      ignoreStoreReadErrorWithClusterBreakingPotential: bool('Deletes an object the store cannot decode; unsafe.'),
    }),
    Patch: { type: 'object', description: 'The body of a PATCH: a JSON patch, merge patch, strategic merge patch or apply configuration.' },
    Status: kind('v1:Status', 'The result of an operation that returns no object, and of every failure.', {
      status: str('`Success` or `Failure`.'),
      message: str('Human-readable description of the result.'),
      reason: str('Machine-readable reason, e.g. NotFound or TooManyRequests.'),
      details: ref('meta.StatusDetails', 'More about the failure.'),
      code: int32('HTTP status code.'),
    }, { listMeta: true }),
    StatusDetails: obj('Details of a failure.', {
      name: str('Name of the object concerned.'),
      group: str('Its API group.'),
      kind: str('Its kind (or resource).'),
      uid: str('Its UID.'),
      causes: listOf('meta.StatusCause', 'Individual causes, e.g. one per invalid field.', { type: 'atomic' }),
      retryAfterSeconds: int32('Seconds to wait before retrying.'),
    }),
    StatusCause: obj('One cause of a failure.', {
      reason: str('Machine-readable cause.'),
      message: str('Human-readable cause.'),
      field: str('The field concerned, e.g. `spec.containers[0].name`.'),
    }),
  }),
  ...definitions('runtime', {
    RawExtension: openObject('An embedded object of any kind, stored as given.'),
  }),
  ...definitions('intstr', {
    IntOrString: { description: 'An integer or a string (often a percentage such as `25%`).', format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] },
  }),
  ...definitions('resource', {
    Quantity: { description: 'A fixed-point number with an optional suffix: `100m`, `128Mi`, `2`, `1e3`.', oneOf: [{ type: 'string' }, { type: 'number' }] },
  }),
};

