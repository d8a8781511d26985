/** `inspect`, `inspectp`, `inspecti` and `info` share crictl's merge of status and verbose info. */

/** Each info value that is a JSON object is embedded parsed; other values stay strings. */
export function mergeInfo(info: Record<string, string> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(info ?? {})) {
    if (v.startsWith('{')) {
      try {
        out[k] = JSON.parse(v);
        continue;
      } catch {
        // not JSON after all: keep the string
      }
    }
    out[k] = v;
  }
  return out;
}

/** `{ status, info }` as crictl prints it; `info` only when present. */
export function statusDocument(status: unknown, info: Record<string, string> | undefined): Record<string, unknown> {
  const merged = mergeInfo(info);
  return Object.keys(merged).length ? { status, info: merged } : { status };
}
