// The API server contract the fake keeps (@nodelet/api/testing contract.ts), on the real server:
// startControlPlane on a loopback port, spoken to as system:admin over TLS.
import https from 'node:https';
import { apiServerContract } from '@nodelet/api/testing';
import { startRealCluster } from '../controllers/testing/real-cluster.js';

apiServerContract('the real API server keeps the contract the fake is held to', async () => {
  const c = await startRealCluster();
  return {
    client: c.admin,
    raw: (method, path, headers, body) =>
      new Promise((resolve, reject) => {
        const req = https.request(`${c.cp.url}${path}`, { method, ca: c.cp.caPem, headers: { ...headers, Authorization: `Bearer ${c.cp.adminToken}` } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (b: Buffer) => chunks.push(b));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      }),
    close: () => c.close(),
  };
});
