/**
 * A table that renders only the rows in view (docs/console.md, "Scale"): 3,000 pods make a few
 * dozen `<tr>` elements, not 3,000. Rows have one fixed height (CSS `.vtable` keeps every cell on
 * one line), so a row's position is its index times that height and the rows out of view are two
 * spacer rows; the header stays in place (sticky) while the body scrolls in its box.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';

/** Rows drawn beyond the visible ones on each side, so a quick scroll does not show blanks. */
const OVERSCAN = 8;

/** The first and one-past-last row index to draw for a box scrolled to `scrollTop`. */
export function visibleRange(count: number, rowHeight: number, scrollTop: number, viewport: number, overscan = OVERSCAN): { start: number; end: number } {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const start = Math.max(0, first - overscan);
  const end = Math.min(count, first + Math.ceil(viewport / rowHeight) + 1 + overscan);
  return { start, end: Math.max(start, end) };
}

export interface VirtualTableProps<T> {
  items: readonly T[];
  /** The `<tr>` of the header. */
  head: ComponentChildren;
  /** The `<tr>` of one item. */
  row(item: T, index: number): JSX.Element;
  columns: number;
  /** The table's accessible name. */
  label: string;
  /** The scroll box's height in rows at most (a short list takes what it needs). */
  maxRows?: number;
}

/** A virtualised table: see the module comment. */
export function VirtualTable<T>(props: VirtualTableProps<T>) {
  const box = useRef<HTMLDivElement>(null);
  // The row height is measured from a drawn row (fonts decide it); 30 px until then.
  const [rowHeight, setRowHeight] = useState(30);
  const [scrollTop, setScrollTop] = useState(0);
  const maxRows = props.maxRows ?? 15;
  const viewport = rowHeight * Math.min(maxRows, Math.max(props.items.length, 1));
  const { start, end } = visibleRange(props.items.length, rowHeight, scrollTop, viewport);
  useLayoutEffect(() => {
    const tr = box.current?.querySelector<HTMLElement>('tbody tr[aria-rowindex]');
    const h = tr?.getBoundingClientRect().height;
    if (h && Math.abs(h - rowHeight) > 0.5) setRowHeight(h);
  });
  const thead = box.current?.querySelector('thead')?.getBoundingClientRect().height ?? rowHeight;
  return (
    <div class="vtable" ref={box} onScroll={(e) => setScrollTop((e.currentTarget as HTMLElement).scrollTop)} style={{ maxHeight: `${viewport + thead + 2}px` }} tabIndex={0} aria-label={props.label} role="region">
      <table aria-rowcount={props.items.length + 1} data-rows={props.items.length}>
        <thead>{props.head}</thead>
        <tbody>
          {start > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${start * rowHeight}px` }}><td colSpan={props.columns} /></tr>}
          {props.items.slice(start, end).map((it, i) => props.row(it, start + i))}
          {end < props.items.length && <tr class="spacer" aria-hidden="true" style={{ height: `${(props.items.length - end) * rowHeight}px` }}><td colSpan={props.columns} /></tr>}
        </tbody>
      </table>
    </div>
  );
}
