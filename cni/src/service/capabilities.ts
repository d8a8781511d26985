/**
 * containerd 1.6 (go-cni) marshals its capability structs without JSON tags, so runtimeConfig
 * arrives as `{"portMappings":[{"HostPort":8080,"ContainerPort":80,"Protocol":"tcp","HostIP":""}]}`
 * (measured). Go plugins decode that case-insensitively; anything else (and the cache, which
 * libcni tools read) expects the convention's camelCase keys. Normalise once at the service edge:
 * lower-case the first letter of object keys inside known capabilities, and drop an empty hostIP.
 */
const KNOWN = new Set(['portMappings', 'bandwidth', 'dns', 'ipRanges', 'ips', 'mac', 'aliases', 'cgroupPath']);

function camel(k: string): string {
  if (k === 'HostIP') return 'hostIP';
  return k.charAt(0).toLowerCase() + k.slice(1);
}

function normalise(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalise);
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) {
    const key = camel(k);
    if (key === 'hostIP' && val === '') continue;
    out[key] = normalise(val);
  }
  return out;
}

export function normaliseCapabilityArgs(runtimeConfig: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [cap, value] of Object.entries(runtimeConfig ?? {})) out[cap] = KNOWN.has(cap) ? normalise(value) : value;
  return out;
}
