/** Quantity → integer conversions for the scheduler's arithmetic (milli-CPU, bytes, pod counts). */
import { parseQuantity, parseQuantityMilli } from '@nodelet/api';

/** The quantity in thousandths, rounded up (`100m` → 100, `1` → 1000), as upstream `MilliValue()`. */
export function quantityMilli(q: string | number): number {
  return typeof q === 'number' ? Math.ceil(q * 1000) : parseQuantityMilli(q);
}

/** The quantity as an integer, rounded up (`128Mi` → 134217728), as upstream `Value()`. */
export function quantityValue(q: string | number): number {
  return Math.ceil(typeof q === 'number' ? q : parseQuantity(q));
}
