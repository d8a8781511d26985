/**
 * The string formats a CRD schema's `format` checks, as kube-openapi's format registry does for
 * custom resources (strfmt): a value of a known format that does not parse is invalid; unknown
 * formats (and number formats such as int32) are documentation, as upstream.
 */
import { isIP } from 'node:net';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$|^0$/;
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*$/;

const CHECKS: Readonly<Record<string, (v: string) => boolean>> = {
  'date-time': (v) => RFC3339.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  datetime: (v) => RFC3339.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`)),
  uuid: (v) => UUID.test(v),
  ipv4: (v) => isIP(v) === 4,
  ipv6: (v) => isIP(v) === 6,
  cidr: (v) => {
    const [ip, bits, ...rest] = v.split('/');
    const fam = isIP(ip ?? '');
    return rest.length === 0 && fam !== 0 && /^\d{1,3}$/.test(bits ?? '') && Number(bits) <= (fam === 4 ? 32 : 128);
  },
  mac: (v) => /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$/i.test(v),
  hostname: (v) => HOSTNAME.test(v),
  byte: (v) => v.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(v),
  duration: (v) => GO_DURATION.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
};

/** False when `value` is not of the known string `format`; true for unknown formats. */
export function matchesFormat(format: string, value: string): boolean {
  const check = CHECKS[format];
  return !check || check(value);
}
