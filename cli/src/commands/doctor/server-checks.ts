/**
 * Control-plane checks of `nodelet doctor`: the server answers over TLS with the CA of the
 * kubeconfig (and, with --ca-cert-hash, that CA is the expected one), and the credential in the
 * kubeconfig is accepted and may read its own Node.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { ApiClient, loadKubeconfig, NODES } from '@nodelet/api';
import { describeError, errCode } from '@nodelet/base';
import type { Check, CheckResult } from './check.js';

export interface ServerCheckOptions {
  kubeconfig: string;
  nodeName?: string;
  /** `sha256:<hex>` of the CA's SubjectPublicKeyInfo, as `nodelet token create` prints it. */
  caCertHash?: string;
}

/** kubeadm's CA pin: sha256 over the DER SubjectPublicKeyInfo of the CA certificate. */
export function caCertHash(pem: string | Buffer): string {
  const spki = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}

export function serverChecks(o: ServerCheckOptions): Check[] {
  return [
    {
      id: 'server',
      title: 'API server',
      async run(signal): Promise<CheckResult[]> {
        let cfg;
        try {
          cfg = await loadKubeconfig(o.kubeconfig);
        } catch (err) {
          return [{ id: 'server.kubeconfig', level: 'fail', message: describeError(err), fix: 'run `nodelet join` to write the agent kubeconfig, or pass --kubeconfig' }];
        }
        const out: CheckResult[] = [];
        if (o.caCertHash) {
          if (!cfg.ca) out.push({ id: 'server.ca', level: 'fail', message: 'the kubeconfig carries no CA to compare with --ca-cert-hash', fix: 'rejoin with `nodelet join`' });
          else {
            const got = caCertHash(cfg.ca);
            out.push(got === o.caCertHash
              ? { id: 'server.ca', level: 'pass', message: `CA matches ${o.caCertHash.slice(0, 19)}…` }
              : { id: 'server.ca', level: 'fail', message: `CA hash is ${got}, expected ${o.caCertHash}`, fix: 'the kubeconfig points at another cluster: rejoin with the right server and hash' });
          }
        }
        const client = new ApiClient({ ...cfg, timeoutMs: 5_000 });
        try {
          const v = JSON.parse((await client.getRaw('/version', { signal })).toString()) as { gitVersion?: string };
          out.push({ id: 'server.reachable', level: 'pass', message: `${cfg.server} answers (${v.gitVersion ?? 'unknown version'})` });
        } catch (err) {
          const code = errCode(err);
          if (code === 'ERR_UNAUTHENTICATED') {
            out.push({ id: 'server.reachable', level: 'pass', message: `${cfg.server} answers` });
          } else {
            return [...out, { id: 'server.reachable', level: 'fail', message: describeError(err), fix: /certificate|self.signed|verify/i.test(describeError(err)) ? 'the server certificate is not signed by the kubeconfig CA: rejoin' : 'start the server (`systemctl start nodelet-server`) or check the address and firewall' }];
          }
        }
        if (o.nodeName) {
          try {
            await client.get(NODES, o.nodeName, { signal });
            out.push({ id: 'server.credential', level: 'pass', message: `credential ${cfg.user} may read node "${o.nodeName}"` });
          } catch (err) {
            const code = errCode(err);
            if (code === 'ERR_NOT_FOUND') out.push({ id: 'server.credential', level: 'warn', message: `node "${o.nodeName}" is not registered yet`, fix: 'start the agent; it registers the node' });
            else if (code === 'ERR_UNAUTHENTICATED') out.push({ id: 'server.credential', level: 'fail', message: 'the server rejects the credential (401)', fix: 'the token expired or was revoked: create a token on the server (`nodelet token create`) and `nodelet join` again' });
            else if (code === 'ERR_PERMISSION_DENIED') out.push({ id: 'server.credential', level: 'fail', message: `the credential may not read node "${o.nodeName}" (403)`, fix: 'the credential belongs to another node: check --node-name or rejoin' });
            else out.push({ id: 'server.credential', level: 'fail', message: describeError(err) });
          }
        }
        return out;
      },
    },
  ];
}
