/**
 * Durations as Go's `time.ParseDuration` reads them: the form of every duration in a
 * KubeletConfiguration, a kube-apiserver or crictl flag and a kubectl argument ("300ms", "1.5h",
 * "2h45m", "1m0s"). One parser, so that the agent's config, the server's flags and the CLI agree
 * on what a string means.
 */
import { AgentError } from './errors.js';

/**
 * What a number without a unit means. Go rejects it (only "0" needs no unit); some of our flags
 * have always taken a bare number of seconds, and callers say so rather than inherit a default.
 */
export type BareNumber = 'reject' | 'seconds';

export interface ParseDurationOptions {
  /** What "30" means: an error (Go, and every config file field) or 30 seconds (older flags). */
  bare: BareNumber;
  /** Go accepts a sign; every caller here wants a length of time, so "-1m" is refused unless this is set. */
  allowNegative?: boolean;
}

const UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const NUMBER = String.raw`(?:\d+(?:\.\d*)?|\.\d+)`;
const PART = new RegExp(String.raw`(${NUMBER})(ns|us|µs|μs|ms|s|m|h)`, 'y');
const BARE = new RegExp(String.raw`^${NUMBER}$`);

/**
 * Milliseconds of `text` (fractional below a millisecond: "1500us" is 1.5). The grammar is
 * `time.ParseDuration`'s: an optional sign, then one or more decimal numbers each with a unit
 * (ns, us, µs, ms, s, m, h), or "0" alone. A bare number is handled as `o.bare` says. Throws
 * ERR_INVALID_ARGUMENT naming the text and the expected form.
 */
export function parseDuration(text: string, o: ParseDurationOptions): number {
  const s = text.trim();
  let sign = 1;
  let rest = s;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  const fail = (why: string): AgentError =>
    new AgentError('ERR_INVALID_ARGUMENT', `invalid duration "${text}": ${why} (e.g. "500ms", "10s", "1m30s", "2h"${o.bare === 'seconds' ? ', or a number of seconds' : ''})`);
  if (sign < 0 && !o.allowNegative) throw fail('must not be negative');
  let ms: number;
  if (rest === '0') ms = 0;
  else if (BARE.test(rest)) {
    if (o.bare === 'reject') throw fail('missing unit');
    ms = Number(rest) * 1_000;
  } else {
    if (rest === '') throw fail('empty');
    ms = 0;
    let pos = 0;
    while (pos < rest.length) {
      PART.lastIndex = pos;
      const m = PART.exec(rest);
      if (!m) throw fail(`cannot read "${rest.slice(pos)}"`);
      ms += Number(m[1]) * UNIT_MS[m[2]!]!;
      pos = PART.lastIndex;
    }
  }
  return sign * ms;
}
