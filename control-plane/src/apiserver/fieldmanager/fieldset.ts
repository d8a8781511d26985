/**
 * Sets of field paths as server-side apply tracks them (structured-merge-diff's fieldpath.Set),
 * and their wire form, `FieldsV1`. A path is a list of path elements, each a string in the
 * FieldsV1 spelling: `f:<field>` (a field of a struct or map), `k:{"name":"c"}` (an item of an
 * associative list, by its key fields, sorted by name), `v:<json>` (an item of a set list) or
 * `i:<n>` (an item of a list with no keys). A set holds members (paths it owns outright) and, per
 * element, the set under it; in FieldsV1 a member that also has children is written as `".": {}`
 * inside that child.
 */
import { isPlainObject, type Json } from '../object.js';

export type PathElement = string;
export type FieldPath = readonly PathElement[];

/** The rank of a path element's kind, by its first character: field, key, value, index, else last. */
function kindRank(pe: PathElement): number {
  switch (pe.charCodeAt(0)) {
    case 102: // f
      return 0;
    case 107: // k
      return 1;
    case 118: // v
      return 2;
    case 105: // i
      return 3;
    default:
      return 9;
  }
}

/** FieldsV1 writes elements fields first, then keys, values and indexes, each sorted. */
function compareElements(a: PathElement, b: PathElement): number {
  const d = kindRank(a) - kindRank(b);
  if (d !== 0) return d;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Sorts `pes` in place by {@link compareElements}. A short array (most levels of an object) is
 * sorted by insertion: `Array#sort` allocates a work copy per call, which on every level of every
 * write's FieldsV1 was the field manager's largest allocation (5 KiB per pod create).
 */
function sortElements(pes: PathElement[]): void {
  if (pes.length > 16) {
    pes.sort(compareElements);
    return;
  }
  for (let i = 1; i < pes.length; i++) {
    const x = pes[i]!;
    let j = i - 1;
    while (j >= 0 && compareElements(pes[j]!, x) > 0) {
      pes[j + 1] = pes[j]!;
      j--;
    }
    pes[j + 1] = x;
  }
}

export class FieldSet {
  readonly members = new Set<PathElement>();
  readonly children = new Map<PathElement, FieldSet>();

  /** A set of the given paths. */
  static of(paths: Iterable<FieldPath>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds `path` as a member. The empty path is not a member of anything and is ignored. */
  insert(path: FieldPath): void {
    if (path.length === 0) return;
    let parent: FieldSet | undefined;
    for (let i = 0; i < path.length - 1; i++) parent = (parent ?? this).child(path[i]!);
    (parent ?? this).members.add(path[path.length - 1]!);
  }

  /** The set under `pe`, created when missing. */
  child(pe: PathElement): FieldSet {
    let c = this.children.get(pe);
    if (!c) this.children.set(pe, (c = new FieldSet()));
    return c;
  }

  /** The set under `path`, if any. */
  at(path: FieldPath): FieldSet | undefined {
    return path.reduce<FieldSet | undefined>((s, pe) => s?.children.get(pe), this);
  }

  has(path: FieldPath): boolean {
    const parent = this.at(path.slice(0, -1));
    return !!parent && path.length > 0 && parent.members.has(path[path.length - 1]!);
  }

  /** True when the set holds `path` or anything under it. */
  hasPrefix(path: FieldPath): boolean {
    if (this.has(path)) return true;
    const under = this.at(path);
    return !!under && !under.empty();
  }

  empty(): boolean {
    if (this.members.size) return false;
    for (const c of this.children.values()) if (!c.empty()) return false;
    return true;
  }

  /** Every member path, fields before keys, values and indexes. */
  *paths(prefix: PathElement[] = []): Generator<FieldPath> {
    const pes = [...new Set([...this.members, ...this.children.keys()])].sort(compareElements);
    for (const pe of pes) {
      if (this.members.has(pe)) yield [...prefix, pe];
      const c = this.children.get(pe);
      if (c) yield* c.paths([...prefix, pe]);
    }
  }

  union(o: FieldSet): FieldSet {
    const out = this.clone();
    for (const m of o.members) out.members.add(m);
    for (const [pe, c] of o.children) out.children.set(pe, (out.children.get(pe) ?? new FieldSet()).union(c));
    return out;
  }

  /** Members of this set not in `o` (an element's children are subtracted element by element). */
  difference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (!o.members.has(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      const oc = o.children.get(pe);
      const d = oc ? c.difference(oc) : c.clone();
      if (!d.empty()) out.children.set(pe, d);
    }
    return out;
  }

  /**
   * Removes `o`'s members and everything under them from this set, in place, and returns it: for
   * a set its caller built and owns (a comparison's or a configuration's), which a copy would only
   * double on every write. A child left empty goes; an empty child the removal did not touch may
   * stay, which no reading of the set can tell (members, paths, FieldsV1, comparisons).
   */
  removeRecursive(o: FieldSet): this {
    for (const m of o.members) {
      this.members.delete(m);
      this.children.delete(m);
    }
    for (const [pe, oc] of o.children) {
      if (o.members.has(pe)) continue;
      const c = this.children.get(pe);
      if (c === undefined) continue;
      c.removeRecursive(oc);
      if (c.empty()) this.children.delete(pe);
    }
    return this;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (o.members.has(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      const oc = o.children.get(pe);
      if (!oc) continue;
      const i = c.intersection(oc);
      if (!i.empty()) out.children.set(pe, i);
    }
    return out;
  }

  equals(o: FieldSet): boolean {
    return this.difference(o).empty() && o.difference(this).empty();
  }

  clone(): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) out.members.add(m);
    for (const [pe, c] of this.children) out.children.set(pe, c.clone());
    return out;
  }

  /** The FieldsV1 form (`{"f:spec":{"f:replicas":{}}}`), elements in upstream's order. */
  toFieldsV1(): Json {
    const out: Json = {};
    this.#writeFieldsV1(out);
    return out;
  }

  /**
   * Writes this set's FieldsV1 keys into `out` and returns how many it wrote. A member with
   * children writes its children into an object that starts with `".": {}`, so that object is
   * built once (not copied to put the dot first), and a child that wrote nothing is known
   * without looking at its object again.
   */
  #writeFieldsV1(out: Json): number {
    const pes = [...this.members];
    for (const pe of this.children.keys()) if (!this.members.has(pe)) pes.push(pe);
    if (pes.length > 1) sortElements(pes);
    let written = 0;
    for (const pe of pes) {
      const member = this.members.has(pe);
      const c = this.children.get(pe);
      if (c !== undefined) {
        // A child writes nothing exactly when it is empty (holds no member at any depth).
        const sub: Json = member ? { '.': {} } : {};
        if (c.#writeFieldsV1(sub) > 0) {
          out[pe] = sub;
          written++;
          continue;
        }
      }
      if (member) {
        out[pe] = {};
        written++;
      }
    }
    return written;
  }

  /** Reads FieldsV1; throws an Error naming what is malformed. */
  static fromFieldsV1(v: unknown): FieldSet {
    const out = new FieldSet();
    readInto(out, v, 0);
    return out;
  }
}

function readInto(s: FieldSet, v: unknown, depth: number): void {
  if (!isPlainObject(v)) throw new Error('FieldsV1 must be a JSON object');
  if (depth > 64) throw new Error('FieldsV1 is nested too deeply');
  for (const [pe, sub] of Object.entries(v)) {
    if (pe === '.') continue;
    if (!validElement(pe)) throw new Error(`invalid path element ${JSON.stringify(pe)} in FieldsV1`);
    if (!isPlainObject(sub)) throw new Error(`the value of ${pe} in FieldsV1 must be an object`);
    const keys = Object.keys(sub);
    if (keys.length === 0 || keys.includes('.')) s.members.add(pe);
    if (keys.some((k) => k !== '.')) readInto(s.child(pe), sub, depth + 1);
  }
}

/** A FieldsV1 key: `f:` any name, `k:` a JSON object, `v:` a JSON value, `i:` an index. */
function validElement(pe: string): boolean {
  const body = pe.slice(2);
  switch (pe.slice(0, 2)) {
    case 'f:':
      return true;
    case 'i:':
      return /^(0|[1-9][0-9]*)$/.test(body);
    case 'k:':
    case 'v:':
      try {
        const v: unknown = JSON.parse(body);
        return pe[0] === 'v' || isPlainObject(v);
      } catch {
        return false;
      }
    default:
      return false;
  }
}

/**
 * A path as upstream prints it in conflicts and errors: `.spec.replicas`,
 * `.spec.containers[name="app"].image`, `.metadata.finalizers[="x"]`, `.spec.args[0]`.
 */
export function pathString(path: FieldPath): string {
  return path
    .map((pe) => {
      const body = pe.slice(2);
      switch (pe[0]) {
        case 'f':
          return `.${body}`;
        case 'k': {
          const key = JSON.parse(body) as Json;
          return `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
        }
        case 'v':
          return `[=${body}]`;
        default:
          return `[${body}]`;
      }
    })
    .join('');
}
