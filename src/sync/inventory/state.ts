/**
 * The inventory flow's state in Redis, per target (`{sku}` is the target's key, target-key.ts: the bare
 * Code for the default target, so state of releases before targets is the default target's; with
 * `store.siteId` listed in `inventory.sites`, that site's targets keep it too, `stateKeyOf`):
 * - `inv:pending:{sku}`  field → JSON PendingEntry: values read from the ERP, not yet on the store;
 * - `inv:applied:{sku}`  field → version: the newest version the store has taken (or already had);
 * - `inv:acked:{sku}`    field → JSON value: what the store last acknowledged, for change detection;
 * - `inv:lock:{sku}`     a short write lock, so that two jobs never PUT one SKU at once;
 * - `inv:erp:{sku}`      field → JSON PendingEntry: the newest value the ERP gave (kept once sent): the
 *   published stock is computed from it, and `inventory explain` shows it;
 * - `inv:res:{code}`     the Code's reservations (`listing/reservations.ts`, shared by its targets), read here with the rest;
 * and per source `inv:cursor:{source}` → JSON cursor (`cursors`, a SourceCursors).
 *
 * The scripts that merge, settle and lock (`state-scripts.ts`) make each of these steps atomic across
 * concurrent producers and workers. These keys hold ERP values and versions only, never secrets.
 */
import type { ChainableCommander, Redis } from 'ioredis';

import { stateKey } from '../../queue/connection.js';
import { SourceCursors } from '../drain-source.js';
import { defineInventoryScripts, type ScriptCommands } from './state-scripts.js';
import { codeOf, stateKeyOf } from './target-key.js';
import type { PendingEntry } from './types.js';

/** The per-SKU keys. */
type StateKind = 'pending' | 'applied' | 'acked' | 'lock' | 'erp' | 'res';

/** SKUs per script call: one call holds Redis for the time it runs, so large batches go in chunks. */
const SCRIPT_CHUNK = 200;

/** The acked-hash field holding when the store last acknowledged a write of the SKU (ms). */
export const ACKED_AT_FIELD = '@at';

/** A pending entry as read, with its raw JSON (the identity settle compares against). */
export interface PendingRead {
  raw: string;
  entry: PendingEntry;
}

/** Everything the worker needs about one SKU, read atomically. */
export interface SkuState {
  pending: Map<string, PendingRead>;
  applied: Map<string, number>;
  acked: Map<string, unknown>;
  /** The newest value the ERP gave per field (sent or not). */
  erp: Map<string, PendingEntry>;
  /** The SKU's reservation hash as stored (`parseSkuReservations` reads it). */
  reservations: Record<string, string>;
}

/** What a job settles for one SKU. */
export interface SkuSettlement {
  sku: string;
  settlements: readonly Settlement[];
  /** When the store acknowledged the job's write of the SKU, if it did. */
  ackedAt?: number;
}

/** How a handled pending entry is settled. */
export type Settlement =
  /** The store has the value now (sent and acknowledged, or already equal): record it, clear pending. */
  | { mode: 'applied'; field: string; read: PendingRead; ackValue?: unknown }
  /** Stale or invalid: clear it from pending without recording anything. */
  | { mode: 'drop'; field: string; read: PendingRead };

/** Reads and writes the inventory state of one Redis prefix. */
export class InventoryState {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #scripts: ScriptCommands;
  readonly #homeSite: number | undefined;

  /** The cursor of each source of this flow. */
  readonly cursors: SourceCursors;

  /** `homeSite`: the site whose targets continue the bare-Code state (`homeSiteOf`). */
  constructor(redis: Redis, prefix: string, homeSite?: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#homeSite = homeSite;
    this.cursors = new SourceCursors(redis, prefix, 'inv');
    this.#scripts = defineInventoryScripts(redis);
  }

  /** A target's key of `kind`; the reservations are per Code, shared by the Code's targets. */
  #key(kind: StateKind, sku: string): string {
    return stateKey(this.#prefix, 'inv', kind, kind === 'res' ? codeOf(sku) : stateKeyOf(sku, this.#homeSite));
  }

  /**
   * Merges the field entries of several SKUs (one script call per chunk); returns per SKU the job
   * priority its change deserves (the most urgent when a SKU comes twice).
   */
  async merge(items: ReadonlyArray<{ sku: string; entries: Record<string, PendingEntry> }>): Promise<Map<string, number>> {
    const priorities = new Map<string, number>();
    const merged = items.filter(({ entries }) => Object.keys(entries).length > 0);
    for (let start = 0; start < merged.length; start += SCRIPT_CHUNK) {
      const chunk = merged.slice(start, start + SCRIPT_CHUNK);
      const keys = chunk.flatMap(({ sku }) => [this.#key('pending', sku), this.#key('erp', sku)]);
      const args = chunk.flatMap(({ entries }) => {
        const fields = Object.entries(entries);
        return [String(fields.length), ...fields.flatMap(([field, entry]) => [field, JSON.stringify(entry)])];
      });
      const results = await this.#scripts.invMerge(keys.length, ...keys, ...args);
      chunk.forEach(({ sku }, i) => priorities.set(sku, Math.min(Number(results[i]), priorities.get(sku) ?? Number.POSITIVE_INFINITY)));
    }
    return priorities;
  }

  /** Reads pending, applied, acked, the ERP's last values and the reservations of a SKU in one transaction. */
  async read(sku: string): Promise<SkuState> {
    const results = await execOrThrow(
      this.#redis
        .multi()
        .hgetall(this.#key('pending', sku))
        .hgetall(this.#key('applied', sku))
        .hgetall(this.#key('acked', sku))
        .hgetall(this.#key('erp', sku))
        .hgetall(this.#key('res', sku)),
    );
    const [pending, applied, acked, erp, reservations] = results as Array<Record<string, string>>;
    return skuState(pending ?? {}, applied ?? {}, acked ?? {}, erp ?? {}, reservations ?? {});
  }

  /**
   * Takes the write locks of several SKUs (see `lock`) and reads their state (as `read`), one script
   * call per chunk; a SKU whose lock another owner holds maps to undefined.
   */
  async lockAndReadMany(skus: readonly string[], owner: string, ttlMs: number): Promise<Map<string, SkuState | undefined>> {
    const out = new Map<string, SkuState | undefined>();
    for (let start = 0; start < skus.length; start += SCRIPT_CHUNK) {
      const chunk = skus.slice(start, start + SCRIPT_CHUNK);
      const keys = chunk.flatMap((sku) => ['pending', 'applied', 'acked', 'lock', 'erp', 'res'].map((kind) => this.#key(kind as StateKind, sku)));
      const results = await this.#scripts.invLockAndRead(keys.length, ...keys, owner, ttlMs);
      chunk.forEach((sku, i) => {
        const result = results[i];
        if (!result) {
          out.set(sku, undefined);
          return;
        }
        const [pending, applied, acked, erp, reservations] = result.map(hashOf);
        out.set(sku, skuState(pending ?? {}, applied ?? {}, acked ?? {}, erp ?? {}, reservations ?? {}));
      });
    }
    return out;
  }

  /** `lockAndReadMany` of one SKU: its state, or undefined when another owner holds its lock. */
  async lockAndRead(sku: string, owner: string, ttlMs: number): Promise<SkuState | undefined> {
    return (await this.lockAndReadMany([sku], owner, ttlMs)).get(sku);
  }

  /**
   * Applies the settlements of several SKUs (one script call per chunk, each SKU atomically); `ackedAt`
   * records when the store acknowledged a write of the SKU; with `unlockOwner`, then releases each
   * SKU's write lock if that owner still holds it (a job's last round trip).
   */
  async settleMany(items: readonly SkuSettlement[], unlockOwner?: string): Promise<void> {
    const work = unlockOwner === undefined ? items.filter((item) => item.settlements.length > 0 || item.ackedAt !== undefined) : items;
    for (let start = 0; start < work.length; start += SCRIPT_CHUNK) {
      const chunk = work.slice(start, start + SCRIPT_CHUNK);
      const keys = chunk.flatMap(({ sku }) => [this.#key('pending', sku), this.#key('applied', sku), this.#key('acked', sku), this.#key('lock', sku)]);
      const args = chunk.flatMap(({ settlements, ackedAt }) => {
        const groups = settlements.flatMap((s) => [
          s.mode,
          s.field,
          s.read.raw,
          String(s.read.entry.version),
          s.mode === 'applied' && s.ackValue !== undefined ? JSON.stringify(s.ackValue) : '',
        ]);
        if (ackedAt !== undefined) groups.push('stamp', ACKED_AT_FIELD, '', '0', JSON.stringify(ackedAt));
        return [String(groups.length / 5), ...groups];
      });
      await this.#scripts.invSettle(keys.length, ...keys, unlockOwner ?? '', ...args);
    }
  }

  /** `settleMany` of one SKU. */
  async settle(sku: string, settlements: readonly Settlement[], ackedAt?: number, unlockOwner?: string): Promise<void> {
    await this.settleMany([{ sku, settlements, ...(ackedAt === undefined ? {} : { ackedAt }) }], unlockOwner);
  }

  /** Takes or renews the write locks of several SKUs for `ttlMs` (see `lock`); returns how many the owner holds. */
  async lockMany(skus: readonly string[], owner: string, ttlMs: number): Promise<number> {
    if (skus.length === 0) return 0;
    const keys = skus.map((sku) => this.#key('lock', sku));
    return this.#scripts.invLock(keys.length, ...keys, owner, ttlMs);
  }

  /**
   * Takes the SKU's write lock for `ttlMs`. A SKU changed again while its job waits is in two jobs, and
   * a failed job retried from the dashboard (or a stalled one recovered) runs beside a newer job: the
   * lock keeps their PUTs from crossing, which could leave an older value on the store. The owner that
   * holds it may take it again: that renews it, and lets a job restarted after a crash continue.
   */
  async lock(sku: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.lockMany([sku], owner, ttlMs)) === 1;
  }

  /** Releases the SKU's write lock if `owner` still holds it. */
  async unlock(sku: string, owner: string): Promise<void> {
    await this.#scripts.invUnlock(this.#key('lock', sku), owner);
  }

  /** The applied versions of several SKUs (the reconcile versions cursor-less snapshot rows with them). */
  async appliedVersions(skus: readonly string[]): Promise<Map<string, Map<string, number>>> {
    const out = new Map<string, Map<string, number>>();
    if (skus.length === 0) return out;
    const pipeline = this.#redis.pipeline();
    for (const sku of skus) pipeline.hgetall(this.#key('applied', sku));
    const results = await execOrThrow(pipeline);
    skus.forEach((sku, i) => {
      const hash = (results[i] ?? {}) as Record<string, string>;
      out.set(sku, new Map(Object.entries(hash).map(([field, version]) => [field, Number(version)])));
    });
    return out;
  }
}

/** A SKU's state from its hashes as HGETALL gives them. */
function skuState(
  pending: Record<string, string>,
  applied: Record<string, string>,
  acked: Record<string, string>,
  erp: Record<string, string>,
  reservations: Record<string, string>,
): SkuState {
  return {
    pending: new Map(Object.entries(pending).map(([field, raw]) => [field, { raw, entry: JSON.parse(raw) as PendingEntry }])),
    applied: new Map(Object.entries(applied).map(([field, version]) => [field, Number(version)])),
    acked: new Map(Object.entries(acked).map(([field, value]) => [field, JSON.parse(value) as unknown])),
    erp: new Map(Object.entries(erp).map(([field, raw]) => [field, JSON.parse(raw) as PendingEntry])),
    reservations,
  };
}

/** HGETALL's flat reply as a Lua script returns it → a record of field → value. */
function hashOf(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}

/** Runs a pipeline or transaction and throws the first command error instead of returning it. */
export async function execOrThrow(commands: ChainableCommander): Promise<unknown[]> {
  const results = (await commands.exec()) ?? [];
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
