/**
 * Notices when the Redis master behind storesync's connections is no longer the one it was: Sentinel promoted a
 * replica, a Cluster replica took over the prefix's slot, or a single server restarted (perhaps from an AOF missing
 * its last second). On every (re)connect it reads the master's `run_id` and `master_replid` through a script keyed
 * under the prefix (so on a Cluster it asks the node owning the prefix's slot, on Sentinel the master); a change is a
 * failover. Whatever a process keeps in memory about Redis' state must be re-read after one (see `onFailover`).
 */
import type { Redis } from 'ioredis';

/** Who the master is: a new process has a new run_id, a promoted replica a new replication id. */
export interface MasterIdentity {
  readonly runId: string;
  readonly replId: string;
}

/** What a listener learns of a failover. */
export interface FailoverEvent {
  readonly from: MasterIdentity;
  readonly to: MasterIdentity;
}

const IDENTITY = "return {redis.call('INFO', 'server'), redis.call('INFO', 'replication')}";

function field(info: string, name: string): string {
  return new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1] ?? '';
}

/** Reads the identity of the master that owns `key`'s slot. */
export async function masterIdentity(connection: Redis, key: string): Promise<MasterIdentity> {
  const [server, replication] = (await connection.eval(IDENTITY, 1, key)) as [string, string];
  return { runId: field(server, 'run_id'), replId: field(replication, 'master_replid') };
}

/** Follows every connection of a process; one change of master is reported once, whichever connection sees it first. */
export class MasterWatch {
  readonly #key: string;
  readonly #listeners = new Set<(event: FailoverEvent) => void>();
  #known: MasterIdentity | undefined;
  #checking: Promise<void> | undefined;
  #again = false;

  /** `key` names the slot to ask about: any key under the prefix (`<prefix>:master-watch`). */
  constructor(prefix: string) {
    this.#key = `${prefix}:master-watch`;
  }

  /** The master last seen, once a connection was ready. */
  get known(): MasterIdentity | undefined {
    return this.#known;
  }

  /** Calls `listener` on each failover; returns a function that removes it. */
  onFailover(listener: (event: FailoverEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Checks the master each time `connection` becomes ready (the first time included). A Cluster client stays ready
   * while one of its masters fails over: it is checked again when it drops a node or refreshes its slot table.
   */
  track(connection: Redis): void {
    for (const event of ['ready', '-node', 'refresh']) connection.on(event, () => void this.check(connection));
  }

  /** Reads the master's identity and reports a change; concurrent calls share one read (a later one re-reads). */
  check(connection: Redis): Promise<void> {
    if (this.#checking) {
      this.#again = true;
      return this.#checking;
    }
    this.#checking = (async () => {
      do {
        this.#again = false;
        let seen: MasterIdentity;
        try {
          seen = await masterIdentity(connection, this.#key);
        } catch {
          // Gone again before it answered: the next 'ready' checks.
          return;
        }
        const before = this.#known;
        this.#known = seen;
        if (before !== undefined && (before.runId !== seen.runId || before.replId !== seen.replId)) {
          for (const listener of this.#listeners) listener({ from: before, to: seen });
        }
      } while (this.#again);
    })().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }
}
