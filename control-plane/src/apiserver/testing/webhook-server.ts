/**
 * A real HTTPS admission webhook for tests: a test CA, a serving certificate for 127.0.0.1 and the
 * given DNS names, and one handler per URL path that turns an AdmissionReview request into a
 * response (or `'hang'`: never answer). Every review received is kept, in order.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCa, issueCertificate, loadCa } from '../../pki/certs.js';

/** The `request` of an AdmissionReview as received. */
export type ReviewRequest = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** What a handler answers: the response fields besides uid, or `'hang'`. */
export type WebhookAnswer = Record<string, unknown> | 'hang';

export interface TestWebhookServer {
  readonly port: number;
  /** The CA (PEM, base64) to put in `clientConfig.caBundle`. */
  readonly caBundle: string;
  /** Every review request received, oldest first (with the path it was sent to). */
  readonly received: Array<{ path: string; request: ReviewRequest }>;
  /** Sets the handler of a path (`/deny`, …). */
  handle(path: string, fn: (req: ReviewRequest) => WebhookAnswer): void;
  close(): Promise<void>;
}

export async function startTestWebhookServer(dnsNames: readonly string[] = []): Promise<TestWebhookServer> {
  const caPair = await createCa('test webhook CA');
  const pair = await issueCertificate(await loadCa(caPair), { commonName: 'webhook', usage: 'server', ips: ['127.0.0.1'], dnsNames });
  const handlers = new Map<string, (req: ReviewRequest) => WebhookAnswer>();
  const received: TestWebhookServer['received'] = [];
  const hanging = new Set<import('node:http').ServerResponse>();
  const server: Server = createServer({ key: pair.keyPem, cert: pair.certPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: ReviewRequest };
      received.push({ path, request: review.request });
      const answer = handlers.get(path)?.(review.request) ?? { allowed: true };
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, ...answer } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    caBundle: Buffer.from(caPair.certPem).toString('base64'),
    received,
    handle: (path, fn) => void handlers.set(path, fn),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
