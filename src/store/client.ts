/**
 * The typed store client: one keep-alive pool, one session, and a module per resource. Business code
 * talks to the store only through this class.
 */
import type { StoreConfig } from '../config/schema.js';
import { TypedEmitter } from '../events.js';
import type { Logger } from '../log.js';
import { AuthSession } from './auth.js';
import { ClientsApi } from './clients.js';
import { InventoryApi } from './inventory.js';
import type { LoginGate } from './login-gate.js';
import type { StoreMetrics } from './metrics.js';
import { ProductsApi } from './products.js';
import type { RequestLimiter } from './request-limiter.js';
import { SalesApi } from './sales.js';
import { type StoreEvents, Transport } from './transport.js';
import { UsersApi } from './users.js';

export type { LoginAdmission, LoginGate, LoginPermit } from './login-gate.js';
export type { RequestLimiter, RequestPermit } from './request-limiter.js';
export type { CallOptions, StoreEvents } from './transport.js';

/** What the client needs. */
export interface StoreClientOptions {
  config: StoreConfig;
  /** The client logs as a `store` child of this logger. */
  logger: Logger;
  /** Where request and login counts and durations are recorded; none: not recorded. */
  metrics?: StoreMetrics;
  /** The clock (ms since the epoch), for the hash's age and Retry-After dates. */
  now?: () => number;
  /** Waits between retry attempts; tests pass a recorder to avoid real sleeps. */
  sleep?: (ms: number) => Promise<void>;
  /** The store-wide request budget (`store.rateLimit`) every request waits for; none: unlimited. */
  limiter?: RequestLimiter;
  /** Asked before every login (one at a time, `store.maxLoginsPerMinute` across processes); none: not coordinated. */
  loginGate?: LoginGate;
}

/** The store API, typed: `inventory`, `products`, `sales`, `users`, `clients`, plus `login` and `events`. */
export class StoreClient {
  /** `store:request`, `store:retry` and `store:auth` events. */
  readonly events = new TypedEmitter<StoreEvents>();
  readonly inventory: InventoryApi;
  readonly products: ProductsApi;
  readonly sales: SalesApi;
  readonly users: UsersApi;
  readonly clients: ClientsApi;
  readonly #transport: Transport;
  readonly #session: AuthSession;

  constructor(options: StoreClientOptions) {
    const logger = options.logger.child({ component: 'store' });
    const now = options.now ?? Date.now;
    this.#transport = new Transport({
      config: options.config,
      logger,
      events: this.events,
      now,
      metrics: options.metrics,
      sleep: options.sleep,
      limiter: options.limiter,
    });
    this.#session = new AuthSession({
      config: options.config,
      transport: this.#transport,
      logger,
      events: this.events,
      now,
      metrics: options.metrics,
      ...(options.loginGate ? { loginGate: options.loginGate } : {}),
    });
    this.inventory = new InventoryApi(this.#session);
    this.products = new ProductsApi(this.#session);
    this.sales = new SalesApi(this.#session);
    this.users = new UsersApi(this.#session);
    this.clients = new ClientsApi(this.#session);
  }

  /** Logs in now (a new hash). Throws StoreAuthError when the store refuses the credentials. */
  async login(): Promise<void> {
    await this.#session.login();
  }

  /**
   * Resolves when the session holds a hash: the current one, or a new login (through the login gate).
   * While the store refuses the credentials, rejects at once with StoreLoginRefusedError, sending nothing.
   */
  async authenticate(): Promise<void> {
    await this.#session.hash();
  }

  /** Closes the connections; requests in flight finish first. */
  async close(): Promise<void> {
    await this.#transport.close();
  }
}
