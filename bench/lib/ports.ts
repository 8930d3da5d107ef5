/**
 * Spare loopback ports for the servers a benchmark or the chaos run starts (its own redis-server,
 * PostgreSQL cluster, simulator, daemons), so nothing shared is ever touched.
 */
import { createServer } from 'node:net';

/** Asks the kernel for a free port on 127.0.0.1 and releases it for the caller to bind. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
