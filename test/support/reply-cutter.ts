/**
 * A TCP proxy in front of a real server that can lose one reply: armed with `cutAfter(n)`, it forwards
 * the n-th chunk clients send from then on, lets the server run it, then closes that connection before
 * the answer reaches the client — what a Redis restart or a network cut does to a command in flight.
 * Later connections pass untouched.
 */
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';

export interface ReplyCutter {
  readonly port: number;
  /** Chunks clients sent since the last `cutAfter` (or since the start). */
  readonly sent: number;
  /** Loses the reply to the `n`-th chunk from now (1 = the next one). */
  cutAfter(n: number): void;
  /** Whether the armed cut happened. */
  readonly cut: boolean;
  /**
   * Resolves once no client sent anything for `ms`: connections a client opens in the background (a
   * BullMQ worker's blocking connection says hello on its own time) are through their handshakes, so
   * the chunk `cutAfter` counts is one the code under test sends.
   */
  quiet(ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function replyCutter(targetPort: number, targetHost = '127.0.0.1'): Promise<ReplyCutter> {
  let sent = 0;
  let armedAt: number | undefined;
  let cut = false;
  let lastChunkAt = Date.now();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: targetHost, port: targetPort });
    sockets.add(client).add(upstream);
    let dropping = false;
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('data', (chunk) => {
      if (dropping) return;
      lastChunkAt = Date.now();
      sent += 1;
      if (armedAt !== undefined && sent === armedAt) {
        armedAt = undefined;
        dropping = true;
        // The server runs the command; its answer is what is lost.
        upstream.write(chunk, () => setTimeout(() => {
          cut = true;
          end();
        }, 50));
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!dropping) client.write(chunk);
    });
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    port: (server.address() as AddressInfo).port,
    get sent() {
      return sent;
    },
    get cut() {
      return cut;
    },
    async quiet(ms = 150) {
      while (Date.now() - lastChunkAt < ms) await new Promise((wait) => setTimeout(wait, ms - (Date.now() - lastChunkAt)));
    },
    cutAfter(n: number) {
      sent = 0;
      cut = false;
      armedAt = n;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}
