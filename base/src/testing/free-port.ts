import { createServer } from 'node:net';

/**
 * A TCP port on `host` that nothing listens on right now: the kernel picks one, the listener is
 * closed, the number is returned. For tests that must pass a port to a process they start
 * (etcd, `nodelet server`); another process may take it in between, so prefer `listen(0)` where
 * the code under test can report the port it got.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
