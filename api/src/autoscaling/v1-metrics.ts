/**
 * The autoscaling/v1 shape of a metric (spec or status) as upstream writes it into the
 * `autoscaling.alpha.kubernetes.io/metrics` and `…/current-metrics` annotations: the older flat
 * fields (`targetAverageUtilization`, `metricName`, `currentValue`, …) rather than v2's nested
 * `metric`/`target`/`current`. Field pairs below are v1 name ⇄ v2 path inside the source.
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
type Pairs = ReadonlyArray<readonly [string, string]>;

const SOURCE_FIELD: Readonly<Record<string, string>> = {
  Resource: 'resource', ContainerResource: 'containerResource', Pods: 'pods', Object: 'object', External: 'external',
};

const SPEC_PAIRS: Readonly<Record<string, Pairs>> = {
  resource: [['name', 'name'], ['targetAverageUtilization', 'target.averageUtilization'], ['targetAverageValue', 'target.averageValue']],
  containerResource: [['name', 'name'], ['container', 'container'], ['targetAverageUtilization', 'target.averageUtilization'], ['targetAverageValue', 'target.averageValue']],
  pods: [['metricName', 'metric.name'], ['selector', 'metric.selector'], ['targetAverageValue', 'target.averageValue']],
  object: [['target', 'describedObject'], ['metricName', 'metric.name'], ['selector', 'metric.selector'], ['targetValue', 'target.value'], ['averageValue', 'target.averageValue']],
  external: [['metricName', 'metric.name'], ['metricSelector', 'metric.selector'], ['targetValue', 'target.value'], ['targetAverageValue', 'target.averageValue']],
};

const STATUS_PAIRS: Readonly<Record<string, Pairs>> = {
  resource: [['name', 'name'], ['currentAverageUtilization', 'current.averageUtilization'], ['currentAverageValue', 'current.averageValue']],
  containerResource: [['name', 'name'], ['container', 'container'], ['currentAverageUtilization', 'current.averageUtilization'], ['currentAverageValue', 'current.averageValue']],
  pods: [['metricName', 'metric.name'], ['selector', 'metric.selector'], ['currentAverageValue', 'current.averageValue']],
  object: [['target', 'describedObject'], ['metricName', 'metric.name'], ['selector', 'metric.selector'], ['currentValue', 'current.value'], ['averageValue', 'current.averageValue']],
  external: [['metricName', 'metric.name'], ['metricSelector', 'metric.selector'], ['currentValue', 'current.value'], ['currentAverageValue', 'current.averageValue']],
};

function getPath(o: Obj, path: string): unknown {
  let cur: unknown = o;
  for (const k of path.split('.')) cur = isObj(cur) ? cur[k] : undefined;
  return cur;
}

function setPath(o: Obj, path: string, v: unknown): void {
  const keys = path.split('.');
  let cur = o;
  for (const k of keys.slice(0, -1)) cur = isObj(cur[k]) ? (cur[k] as Obj) : (cur[k] = {});
  cur[keys[keys.length - 1]!] = v;
}

function convert(m: unknown, table: Readonly<Record<string, Pairs>>, toV1: boolean): unknown {
  if (!isObj(m)) return m;
  const field = SOURCE_FIELD[String(m.type)];
  const pairs = field ? table[field] : undefined;
  const source = field ? m[field] : undefined;
  if (!field || !pairs || !isObj(source)) return m;
  const out: Obj = {};
  for (const [v1, v2] of pairs) {
    const v = toV1 ? getPath(source, v2) : source[v1];
    if (v === undefined) continue;
    if (toV1) out[v1] = v;
    else setPath(out, v2, v);
  }
  // v2 names the target's kind; v1 implies it by which field is set.
  if (!toV1 && table === SPEC_PAIRS) {
    const target = isObj(out.target) ? out.target : (out.target = {});
    target.type = target.averageUtilization !== undefined ? 'Utilization' : target.value !== undefined ? 'Value' : 'AverageValue';
  }
  return { type: m.type, [field]: out };
}

/** v2 metric specs in their v1 annotation shape. */
export const metricSpecsToV1 = (list: readonly unknown[]): unknown[] => list.map((m) => convert(m, SPEC_PAIRS, true));
/** v1 annotation metric specs in their v2 shape. */
export const metricSpecsFromV1 = (list: readonly unknown[]): unknown[] => list.map((m) => convert(m, SPEC_PAIRS, false));
/** v2 metric statuses in their v1 annotation shape. */
export const metricStatusesToV1 = (list: readonly unknown[]): unknown[] => list.map((m) => convert(m, STATUS_PAIRS, true));
/** v1 annotation metric statuses in their v2 shape. */
export const metricStatusesFromV1 = (list: readonly unknown[]): unknown[] => list.map((m) => convert(m, STATUS_PAIRS, false));
