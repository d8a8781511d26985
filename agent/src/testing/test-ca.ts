/**
 * A throwaway CA for unit tests of the certificate managers: signs a PEM CSR the way the
 * cluster's kubelet-serving signer would (subject and SANs from the request, the validity the
 * test asks for). Stands in for the API server's CSR flow at the process boundary.
 */
// @peculiar/x509 resolves its services through tsyringe, which needs a Reflect metadata polyfill.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as never);
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface TestCa {
  certPem: string;
  /** Signs `csrPem` for [notBefore, notAfter] (epoch ms). */
  sign(csrPem: string, notBefore: number, notAfter: number): Promise<string>;
}

export async function createTestCa(name = 'test-ca'): Promise<TestCa> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: `CN=${name}`,
    notBefore: new Date(Date.UTC(2000, 0, 1)),
    notAfter: new Date(Date.UTC(2100, 0, 1)),
    keys: keys as never,
    signingAlgorithm: ALG,
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
  });
  return {
    certPem: ca.toString('pem'),
    async sign(csrPem, notBefore, notAfter) {
      const csr = new x509.Pkcs10CertificateRequest(csrPem);
      const raw = csr.getExtension('2.5.29.17'); // subjectAltName, parsed generically in a request
      const san = raw ? new x509.SubjectAlternativeNameExtension(raw.rawData) : undefined;
      const cert = await x509.X509CertificateGenerator.create({
        serialNumber: randomBytes(8).toString('hex').replace(/^[89a-f]/, '1'),
        subject: csr.subject,
        issuer: ca.subject,
        notBefore: new Date(notBefore),
        notAfter: new Date(notAfter),
        signingAlgorithm: ALG,
        publicKey: csr.publicKey,
        signingKey: keys.privateKey as never,
        extensions: [
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          ...(san ? [new x509.SubjectAlternativeNameExtension(san.names.toJSON())] : []),
        ],
      });
      return cert.toString('pem');
    },
  };
}
