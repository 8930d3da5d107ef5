/** A simulator and a store client pointed at it, for the store client's integration tests. */
import { storeSchema } from '../../src/config/schema.js';
import { type Logger, silentLogger } from '../../src/log.js';
import type { Metrics } from '../../src/metrics.js';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.js';
import { StoreClient } from '../../src/store/client.js';

/** What a test gets: the simulator, a client, and the waits the client asked for (never slept). */
export interface StoreFixture {
  sim: Simulator;
  client: StoreClient;
  /** Delays of the client's retries, in order; the client does not really sleep. */
  delays: number[];
  /** A further client on the same simulator (closed with the fixture). */
  newClient(options?: ClientOptions): StoreClient;
  close(): Promise<void>;
}

/** Options of a test client. */
export interface ClientOptions {
  logger?: Logger;
  metrics?: Metrics;
  now?: () => number;
  /** Merged into the store configuration. */
  store?: Record<string, unknown>;
  /** Called at each retry wait, before it returns (e.g. to clear a fault). */
  onSleep?: (ms: number) => void;
}

/** Starts a simulator (random port) and a client logged in as its default user. */
export async function storeFixture(simOptions: SimulatorOptions = {}, clientOptions: ClientOptions = {}): Promise<StoreFixture> {
  const sim = await startSimulator({ port: 0, ...simOptions });
  const delays: number[] = [];
  const clients: StoreClient[] = [];
  const newClient = (options: ClientOptions = {}): StoreClient => {
    const client = new StoreClient({
      config: storeSchema.parse({
        baseUrl: sim.url,
        username: simOptions.username ?? 'demo',
        password: simOptions.password ?? 'demo-password',
        retry: { attempts: 4, baseDelayMs: 10, maxDelayMs: 50 },
        ...options.store,
      }),
      logger: options.logger ?? silentLogger(),
      metrics: options.metrics,
      now: options.now,
      sleep: async (ms) => {
        delays.push(ms);
        options.onSleep?.(ms);
      },
    });
    clients.push(client);
    return client;
  };
  const client = newClient(clientOptions);
  return {
    sim,
    client,
    delays,
    newClient,
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await sim.close();
    },
  };
}
