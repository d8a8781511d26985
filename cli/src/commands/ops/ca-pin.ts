/**
 * Trust-on-first-use of a server's CA, pinned by hash the way `kubeadm join` does: the operator
 * copies `sha256:<hex>` (the SubjectPublicKeyInfo hash of the cluster CA) from
 * `nodelet token create`, and join refuses to send any credential to a server whose CA differs.
 *
 * The CA is read from the TLS handshake itself (the server sends its chain: serving cert + CA),
 * with certificate verification off for this one unauthenticated connection only; nothing is
 * sent over it but the TLS ClientHello.
 */
import { connect, type PeerCertificate, type DetailedPeerCertificate } from 'node:tls';
import { createHash, X509Certificate } from 'node:crypto';
import { AgentError } from '@nodelet/base';

export function spkiHash(cert: X509Certificate): string {
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

export function parseCaCertHash(s: string): string {
  const m = /^sha256:([0-9a-f]{64})$/i.exec(s.trim());
  if (!m) throw new AgentError('ERR_INVALID_ARGUMENT', `--ca-cert-hash must look like sha256:<64 hex digits>, got "${s}"`);
  return `sha256:${m[1]!.toLowerCase()}`;
}

function toPem(raw: Buffer): string {
  const b64 = raw.toString('base64').match(/.{1,64}/g)!.join('\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

/** The self-signed root of the chain the server presents. */
export async function fetchServerCa(server: URL, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<{ pem: string; cert: X509Certificate }> {
  const port = Number(server.port || 443);
  const chain = await new Promise<DetailedPeerCertificate>((resolve, reject) => {
    const isIp = /^[\d.]+$|:/.test(server.hostname);
    const sock = connect({ host: server.hostname, port, rejectUnauthorized: false, ...(isIp ? {} : { servername: server.hostname }) });
    opts.signal?.addEventListener('abort', () => sock.destroy(opts.signal?.reason as Error), { once: true });
    const t = setTimeout(() => sock.destroy(new Error(`no TLS handshake within ${opts.timeoutMs ?? 10_000} ms`)), opts.timeoutMs ?? 10_000);
    sock.once('secureConnect', () => {
      clearTimeout(t);
      const c = sock.getPeerCertificate(true);
      sock.end();
      resolve(c);
    });
    sock.once('error', (err) => {
      clearTimeout(t);
      reject(new AgentError('ERR_UNAVAILABLE', `cannot reach the server at ${server.host}: ${err.message}; is \`nodelet server\` running and the address right?`, { cause: err }));
    });
  });
  let c: PeerCertificate | DetailedPeerCertificate | undefined = chain;
  const seen = new Set<string>();
  while (c && 'issuerCertificate' in c && c.issuerCertificate && c.issuerCertificate !== c && !seen.has(c.fingerprint256)) {
    seen.add(c.fingerprint256);
    c = c.issuerCertificate;
  }
  if (!c?.raw) throw new AgentError('ERR_FAILED_PRECONDITION', `the server at ${server.host} presented no certificate`);
  const pem = toPem(c.raw);
  const cert = new X509Certificate(pem);
  if (!cert.ca || cert.issuer !== cert.subject) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `the server at ${server.host} does not send its CA in the TLS chain, so it cannot be pinned; upgrade the server`);
  }
  return { pem, cert };
}
