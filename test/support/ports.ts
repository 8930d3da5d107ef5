/** Spare loopback ports for the servers a test or a benchmark starts of its own. */
import { createServer } from 'node:net';

/** Asks the kernel for a free port on 127.0.0.1 and releases it for the caller to bind. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.unref();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}
