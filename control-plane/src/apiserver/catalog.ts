/**
 * The resources one server serves, the only list discovery, routing, storage, RBAC and the
 * namespace lifecycle read: the built-in table (resources.ts) plus the versions of every
 * Established CustomResourceDefinition (apiextensions/controller.ts), which come and go while the
 * server runs. Each served resource has its own registry and watch cache.
 */
import type { ServedResource } from './context.js';
import { apiVersionOf, type ResourceDef } from './resource.js';

export class ResourceCatalog {
  readonly #make: (def: ResourceDef) => ServedResource;
  readonly #builtin = new Map<string, ServedResource>();
  /** CRD name → its served versions. */
  readonly #custom = new Map<string, ServedResource[]>();
  readonly #terminating = new Set<string>();
  #generation = 0;
  #byPath = new Map<string, ServedResource>();

  constructor(builtins: readonly ResourceDef[], make: (def: ResourceDef) => ServedResource) {
    this.#make = make;
    for (const def of builtins) this.#builtin.set(pathKey(def), make(def));
    this.#reindex();
  }

  /** Bumped on every change: caches of documents derived from the catalog (OpenAPI) key on it. */
  get generation(): number {
    return this.#generation;
  }

  get(group: string, version: string, plural: string): ServedResource | undefined {
    return this.#byPath.get(`${group}/${version}/${plural}`);
  }

  byKind(apiVersion: string, kind: string): ServedResource | undefined {
    return this.all().find((r) => apiVersionOf(r.def) === apiVersion && r.def.kind === kind);
  }

  /** The resource of `group` named `plural`, in any version (the first served). */
  byGroup(group: string, plural: string): ServedResource | undefined {
    return this.all().find((r) => r.def.group === group && r.def.plural === plural);
  }

  all(): ServedResource[] {
    return [...this.#byPath.values()];
  }

  defs(): ResourceDef[] {
    return this.all().map((r) => r.def);
  }

  /** The served versions of the CRD `name`, if it is served. */
  custom(name: string): readonly ServedResource[] | undefined {
    return this.#custom.get(name);
  }

  /** Serves `defs` for the CRD `name` from now on, replacing (and closing) what it served before. */
  setCustom(name: string, defs: readonly ResourceDef[]): void {
    this.#closeCustom(name);
    this.#custom.set(name, defs.map((d) => this.#make(d)));
    this.#reindex();
  }

  /** Marks the CRD `name` as being deleted (creates of its kind are refused) or not. */
  setTerminating(name: string, terminating: boolean): void {
    if (terminating) this.#terminating.add(name);
    else this.#terminating.delete(name);
  }

  /** True when `def` is a custom resource whose CRD is being deleted. */
  isTerminating(def: ResourceDef): boolean {
    return !!def.custom && this.#terminating.has(`${def.plural}.${def.group}`);
  }

  /** Stops serving the CRD `name`; its open watches end. */
  removeCustom(name: string): void {
    if (!this.#custom.has(name)) return;
    this.#closeCustom(name);
    this.#custom.delete(name);
    this.#terminating.delete(name);
    this.#reindex();
  }

  /** Closes every watch cache (server shutdown). */
  close(): void {
    for (const r of this.all()) r.cache.close();
  }

  #closeCustom(name: string): void {
    for (const r of this.#custom.get(name) ?? []) r.cache.close();
  }

  #reindex(): void {
    const next = new Map(this.#builtin);
    for (const list of this.#custom.values()) for (const r of list) if (!next.has(pathKey(r.def))) next.set(pathKey(r.def), r);
    this.#byPath = next;
    this.#generation++;
  }
}

const pathKey = (def: ResourceDef): string => `${def.group}/${def.version}/${def.plural}`;
