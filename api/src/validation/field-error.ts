/**
 * Field errors in the shape of k8s.io/apimachinery/pkg/util/validation/field: the server turns a
 * non-empty list into a 422 Invalid Status whose `details.causes` kubectl prints one per line.
 */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueDuplicate'
  | 'FieldValueNotFound'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany';

export interface FieldError {
  type: FieldErrorType;
  /** JSON path, e.g. `spec.containers[0].image`. */
  field: string;
  message: string;
}

export const required = (field: string, what = 'Required value'): FieldError => ({ type: 'FieldValueRequired', field, message: what });
export const invalidValue = (field: string, value: unknown, why: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${JSON.stringify(value)}: ${why}`,
});
export const duplicate = (field: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, message: `Duplicate value: ${JSON.stringify(value)}` });
export const notFound = (field: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field, message: `Not found: ${JSON.stringify(value)}` });
export const notSupported = (field: string, value: unknown, allowed: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`,
});
/** field.TooLong for a size in bytes; the value itself is never echoed. */
export const tooLong = (field: string, maxBytes: number): FieldError => ({ type: 'FieldValueTooLong', field, message: `Too long: must have at most ${maxBytes} bytes` });
export const forbiddenField = (field: string, why: string): FieldError => ({ type: 'FieldValueForbidden', field, message: `Forbidden: ${why}` });
