/**
 * @peculiar/x509, loaded on first use. A node agent needs it only to make a key and a request
 * (first start, rotation) or a self-signed serving certificate; loaded at start it would keep
 * ~3 MiB of heap (x509, asn1js and its schemas, tsyringe, reflect-metadata) for the
 * process's whole life (docs/performance.md, "Agent footprint"). Concurrent callers share one
 * load; a failed load is retried by the next caller.
 */
import { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

let loading: Promise<typeof X509> | undefined;

export function loadX509(): Promise<typeof X509> {
  loading ??= (async () => {
    // x509 resolves its services through tsyringe, which needs a Reflect metadata polyfill first.
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(webcrypto as never);
    return x509;
  })().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}
