/**
 * The inventory flow's state in Redis, per target (`{sku}` is the target's key, target-key.ts: the bare
 * Code for the default target, so state of releases before targets is the default target's; with
 * `store.siteId` listed in `inventory.sites`, that site's targets keep it too, `stateKeyOf`):
 * - `inv:target:{sku}`   one hash per target, its fields prefixed by kind:
 *   - `p:{field}` → JSON PendingEntry: values read from the ERP, not yet on the store ('' once settled);
 *   - `a:{field}` → version: the newest version the store has taken (or already had);
 *   - `k:{field}` → JSON value: what the store last acknowledged, for change detection;
 *   - `e:{field}` → JSON PendingEntry: the newest value the ERP gave (kept once sent): the published stock
 *     is computed from it, and `inventory explain` shows it;
 * - `inv:locks`          field: a target's state key → `owner|deadline ms`: a short write lock, so that two
 *   jobs never PUT one target at once (one hash for every target: a job's locks cost one command);
 * - `inv:stock`          `Stock:{sku}`, `SafetyStock:{sku}` → the same JSON as `e:Stock`, `e:SafetyStock`: every
 *   target's ERP stock figures in one hash, written by the merge with them, so a kit reads all of its
 *   components' with one HMGET (`listing/kits/kit-stock.ts`);
 * - `inv:res:{code}`     the Code's reservations (`listing/reservations.ts`, shared by its targets), read here with the rest;
 * - `inv:layout`         '2' once the state of the layout before (`inv:pending|applied|acked|erp:{sku}`,
 *   one hash per kind, and `inv:lock:{sku}`) was converted (`ensureLayout`);
 * and per source `inv:cursor:{source}` → JSON cursor (`cursors`, a SourceCursors).
 *
 * One hash per target makes a synced item cost six commands of ours (issue 27; bench/README.md): two to
 * merge, two to lock and read, two to settle. The scripts that merge, settle and lock (`state-scripts.ts`)
 * make each of these steps atomic across concurrent producers and workers. These keys hold ERP values
 * and versions only, never secrets.
 */
import { hash, randomUUID } from 'node:crypto';

import { type ChainableCommander, Cluster, type Redis } from 'ioredis';

import { QUEUE_NAMES, stateKey } from '../../queue/connection.js';
import { RELEASE_IF_OWNER, RENEW_IF_OWNER } from '../../queue/redis-lock.js';
import { SourceCursors } from '../drain-source.js';
import { hashOf, type PendingRead, type SkuState, skuState } from './state-hash.js';
import { defineInventoryScripts, type ScriptCommands } from './state-scripts.js';
import { codeOf, stateKeyOf } from './target-key.js';
import type { PendingEntry } from './types.js';

export { type PendingRead, type SkuState, STATE_FIELD } from './state-hash.js';

/** SKUs per script call: one call holds Redis for the time it runs, so large batches go in chunks. */
const SCRIPT_CHUNK = 200;

/** The acked field holding when the store last acknowledged a write of the SKU (ms). */
export const ACKED_AT_FIELD = '@at';

/** `inv:layout` once the state before one hash per target was converted. */
const LAYOUT = '2';
/** The kinds of the layout before, one hash each per target. */
const OLD_KINDS = ['pending', 'applied', 'acked', 'erp'] as const;
/** Keys a SCAN call of the conversion walks: few round trips over a large keyspace, each call short. */
const SCAN_COUNT = 10_000;
/** The conversion's lock lives this long unless renewed (it is, after every chunk). */
const CONVERT_LOCK_MS = 60_000;

/** The key of a target's state hash (`key`: as stored, `stateKeyOf`). */
export function targetStateKey(prefix: string, key: string): string {
  return stateKey(prefix, 'inv', 'target', key);
}

/**
 * The key of the hash of every target's ERP Stock and SafetyStock entries (`Stock:{key}`,
 * `SafetyStock:{key}` → the entry's JSON, as `e:Stock` and `e:SafetyStock` of the target's state hash,
 * written with them by the same script): a kit reads its components' figures with one HMGET.
 */
export function stockFiguresKey(prefix: string): string {
  return stateKey(prefix, 'inv', 'stock');
}

/** The key of the reservation hash of a Code (`listing/reservations.ts`). */
function reservationKey(prefix: string, code: string): string {
  return stateKey(prefix, 'inv', 'res', code);
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

/** The identity settle compares a pending entry by: the first 16 hex digits of its SHA-1 ('' for none). */
export function pendingDigest(raw: string): string {
  // `hash` rather than `createHash`: one call, no Hash object per settlement (issue 27, the garbage per item).
  return raw === '' ? '' : hash('sha1', raw, 'hex').slice(0, 16);
}

/** Reads and writes the inventory state of one Redis prefix. */
export class InventoryState {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #scripts: ScriptCommands;
  readonly #homeSite: number | undefined;
  readonly #locks: string;
  readonly #figures: string;
  /** Every state hash's key before the target's key (`targetStateKey(prefix, '')`). */
  readonly #targetBase: string;
  /** Every reservation hash's key before the Code (`reservationKey(prefix, '')`). */
  readonly #resBase: string;
  /** The length of every state hash's key before the target's key (the scripts cut it off). */
  readonly #base: number;
  #layout: Promise<void> | undefined;

  /** The cursor of each source of this flow. */
  readonly cursors: SourceCursors;

  /** `homeSite`: the site whose targets continue the bare-Code state (`homeSiteOf`). */
  constructor(redis: Redis, prefix: string, homeSite?: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#homeSite = homeSite;
    this.#locks = stateKey(prefix, 'inv', 'locks');
    this.#figures = stockFiguresKey(prefix);
    // Built once: a job names two keys per SKU in each of its round trips.
    this.#targetBase = targetStateKey(prefix, '');
    this.#resBase = reservationKey(prefix, '');
    this.#base = this.#targetBase.length;
    this.cursors = new SourceCursors(redis, prefix, 'inv');
    this.#scripts = defineInventoryScripts(redis);
  }

  /** A target's state hash. */
  #key(sku: string): string {
    return this.#targetBase + stateKeyOf(sku, this.#homeSite);
  }

  /** The reservations of a target's Code, shared by the Code's targets. */
  #res(sku: string): string {
    return this.#resBase + codeOf(sku);
  }

  /**
   * Resolves once the state of the layout before one hash per target is converted (at most once per
   * instance: a GET when done). The first process takes a lock and converts every target (`CONVERT` in
   * state-scripts.ts: merged with what the new hashes hold, newest wins, then the old keys deleted);
   * another waits for it. Every method below awaits it, so nothing reads a half-converted state.
   */
  ensureLayout(): Promise<void> {
    this.#layout ??= this.#convert().catch((error: unknown) => {
      this.#layout = undefined;
      throw error;
    });
    return this.#layout;
  }

  async #convert(): Promise<void> {
    const marker = stateKey(this.#prefix, 'inv', 'layout');
    if ((await this.#redis.get(marker)) === LAYOUT) return;
    // An inventory queue that never had a job (BullMQ's `meta` hash) has no old state worth converting (every
    // merge is followed by its job; the cursor is saved after it): no SCAN of a large shared keyspace.
    if ((await this.#redis.exists(`${this.#prefix}:${QUEUE_NAMES.inventory}:meta`)) === 0) {
      await this.#redis.set(marker, LAYOUT);
      return;
    }
    const lockKey = stateKey(this.#prefix, 'inv', 'layout', 'lock');
    const owner = randomUUID();
    while ((await this.#redis.set(lockKey, owner, 'PX', CONVERT_LOCK_MS, 'NX')) !== 'OK') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if ((await this.#redis.get(marker)) === LAYOUT) return;
    }
    try {
      const base = `${stateKey(this.#prefix, 'inv')}:`;
      const old = new RegExp(`^(?:${OLD_KINDS.join('|')}):`);
      for (const server of scannedServers(this.#redis)) {
        let cursor = '0';
        do {
          const [next, keys] = await server.scan(cursor, 'MATCH', `${globEscape(base)}*`, 'COUNT', SCAN_COUNT);
          cursor = next;
          const targets = [...new Set(keys.map((key) => key.slice(base.length)).filter((rest) => old.test(rest)).map((rest) => rest.slice(rest.indexOf(':') + 1)))];
          for (let start = 0; start < targets.length; start += SCRIPT_CHUNK) {
            const chunk = targets.slice(start, start + SCRIPT_CHUNK);
            const chunkKeys = [this.#figures, ...chunk.flatMap((key) => [targetStateKey(this.#prefix, key), ...OLD_KINDS.map((kind) => stateKey(this.#prefix, 'inv', kind, key))])];
            await this.#scripts.invConvert(chunkKeys.length, ...chunkKeys, this.#base);
          }
          await this.#redis.eval(RENEW_IF_OWNER, 1, lockKey, owner, CONVERT_LOCK_MS);
        } while (cursor !== '0');
      }
      await this.#redis.set(marker, LAYOUT);
    } finally {
      await this.#redis.eval(RELEASE_IF_OWNER, 1, lockKey, owner);
    }
  }

  /**
   * Merges the field entries of several SKUs (one script call per chunk); returns per SKU the job
   * priority its change deserves (the most urgent when a SKU comes twice).
   */
  async merge(items: ReadonlyArray<{ sku: string; entries: Record<string, PendingEntry> }>): Promise<Map<string, number>> {
    await this.ensureLayout();
    const priorities = new Map<string, number>();
    const merged = items.filter(({ entries }) => Object.keys(entries).length > 0);
    for (let start = 0; start < merged.length; start += SCRIPT_CHUNK) {
      const chunk = merged.slice(start, start + SCRIPT_CHUNK);
      const keys = [this.#figures, ...chunk.map(({ sku }) => this.#key(sku))];
      const args = [String(this.#base), ...chunk.map(({ entries }) => packFields(entries))];
      const results = await this.#scripts.invMerge(keys.length, ...keys, ...args);
      chunk.forEach(({ sku }, i) => priorities.set(sku, Math.min(Number(results[i]), priorities.get(sku) ?? Number.POSITIVE_INFINITY)));
    }
    return priorities;
  }

  /** Reads the state (pending, applied, acked, the ERP's last values) and the reservations of a SKU in one transaction. */
  async read(sku: string): Promise<SkuState> {
    await this.ensureLayout();
    const [state, reservations] = (await execOrThrow(this.#redis.multi().hgetall(this.#key(sku)).hgetall(this.#res(sku)))) as Array<Record<string, string>>;
    return skuState(state ?? {}, reservations ?? {});
  }

  /**
   * `read` of several SKUs, one pipeline per chunk: each hash as it is when read, not one transaction per
   * SKU (for a pass that only decides which SKUs get a job: the worker reads them again under their locks).
   */
  async readMany(skus: readonly string[]): Promise<Map<string, SkuState>> {
    await this.ensureLayout();
    const out = new Map<string, SkuState>();
    for (let start = 0; start < skus.length; start += SCRIPT_CHUNK) {
      const chunk = skus.slice(start, start + SCRIPT_CHUNK);
      const pipeline = this.#redis.pipeline();
      for (const sku of chunk) pipeline.hgetall(this.#key(sku)).hgetall(this.#res(sku));
      const results = (await execOrThrow(pipeline)) as Array<Record<string, string>>;
      chunk.forEach((sku, i) => out.set(sku, skuState(results[2 * i] ?? {}, results[2 * i + 1] ?? {})));
    }
    return out;
  }

  /**
   * Takes the write locks of several SKUs (see `lock`) and reads their state (as `read`), one script
   * call per chunk; a SKU whose lock another owner holds maps to undefined.
   */
  async lockAndReadMany(skus: readonly string[], owner: string, ttlMs: number): Promise<Map<string, SkuState | undefined>> {
    await this.ensureLayout();
    const out = new Map<string, SkuState | undefined>();
    for (let start = 0; start < skus.length; start += SCRIPT_CHUNK) {
      const chunk = skus.slice(start, start + SCRIPT_CHUNK);
      const keys = [this.#locks, ...chunk.flatMap((sku) => [this.#key(sku), this.#res(sku)])];
      const results = await this.#scripts.invLockAndRead(keys.length, ...keys, owner, ttlMs);
      chunk.forEach((sku, i) => {
        const result = results[i];
        if (!result) {
          out.set(sku, undefined);
          return;
        }
        const [state, reservations] = result;
        out.set(sku, skuState(state ?? [], hashOf(reservations ?? [])));
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
    await this.ensureLayout();
    const work = unlockOwner === undefined ? items.filter((item) => item.settlements.length > 0 || item.ackedAt !== undefined) : items;
    for (let start = 0; start < work.length; start += SCRIPT_CHUNK) {
      const chunk = work.slice(start, start + SCRIPT_CHUNK);
      const keys = [this.#locks, ...chunk.map(({ sku }) => this.#key(sku))];
      const args = [unlockOwner ?? '', ...chunk.map(({ settlements, ackedAt }) => packSettlements(settlements, ackedAt))];
      await this.#scripts.invSettle(keys.length, ...keys, ...args);
    }
  }

  /** `settleMany` of one SKU. */
  async settle(sku: string, settlements: readonly Settlement[], ackedAt?: number, unlockOwner?: string): Promise<void> {
    await this.settleMany([{ sku, settlements, ...(ackedAt === undefined ? {} : { ackedAt }) }], unlockOwner);
  }

  /** Takes or renews the write locks of several SKUs for `ttlMs` (see `lock`); returns how many the owner holds. */
  async lockMany(skus: readonly string[], owner: string, ttlMs: number): Promise<number> {
    if (skus.length === 0) return 0;
    await this.ensureLayout();
    let held = 0;
    for (let start = 0; start < skus.length; start += SCRIPT_CHUNK) {
      const keys = [this.#locks, ...skus.slice(start, start + SCRIPT_CHUNK).map((sku) => this.#key(sku))];
      held += await this.#scripts.invLock(keys.length, ...keys, owner, ttlMs);
    }
    return held;
  }

  /**
   * Takes the SKU's write lock for `ttlMs`. A SKU changed again while its job waits is in two jobs, and a
   * failed job retried from the dashboard (or a stalled one recovered) runs beside a newer job: the lock
   * keeps their PUTs from crossing. Its owner may take it again (renewal, a job restarted after a crash);
   * a lock whose deadline passed (its worker died) is free.
   */
  async lock(sku: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.lockMany([sku], owner, ttlMs)) === 1;
  }

  /** Releases the SKU's write lock if `owner` still holds it. */
  async unlock(sku: string, owner: string): Promise<void> {
    await this.ensureLayout();
    await this.#scripts.invUnlock(2, this.#locks, this.#key(sku), owner);
  }

  /** The applied versions of several SKUs (the reconcile versions cursor-less snapshot rows with them). */
  async appliedVersions(skus: readonly string[]): Promise<Map<string, Map<string, number>>> {
    const out = new Map<string, Map<string, number>>();
    if (skus.length === 0) return out;
    await this.ensureLayout();
    const pipeline = this.#redis.pipeline();
    for (const sku of skus) pipeline.hgetall(this.#key(sku));
    const results = await execOrThrow(pipeline);
    skus.forEach((sku, i) => {
      const hash = (results[i] ?? {}) as Record<string, string>;
      out.set(sku, skuState(hash, {}).applied);
    });
    return out;
  }
}

/**
 * The separators of a SKU's argument to MERGE and SETTLE (state-scripts.ts): one argument per SKU rather
 * than five per settlement or two per field, since the Redis client's cost and garbage go by argument
 * (issue 27, the garbage per item). No value holds them: JSON escapes every control character, digests
 * are hex, versions digits, and a field name holding one is refused (`packedField`).
 */
const UNIT = '\u001f';
const RECORD = '\u001e';

/** A field name as packed; throws for one holding a separator (no store or storesync field does). */
function packedField(field: string): string {
  if (field.includes(UNIT) || field.includes(RECORD)) throw new Error(`inventory state: the field name ${JSON.stringify(field)} holds a control character`);
  return field;
}

/** A SKU's fields for MERGE: field US entry JSON, joined by RS. */
export function packFields(entries: Record<string, PendingEntry>): string {
  let packed = '';
  for (const field in entries) packed += `${packed === '' ? '' : RECORD}${packedField(field)}${UNIT}${JSON.stringify(entries[field])}`;
  return packed;
}

/**
 * A SKU's settlements for SETTLE, joined by RS, each as mode, field, the handled entry's digest, version
 * and acked value JSON ('' = leave) joined by US; `ackedAt` adds the stamp of `k:@at` last.
 */
export function packSettlements(settlements: readonly Settlement[], ackedAt: number | undefined): string {
  let packed = '';
  for (const s of settlements) {
    const acked = s.mode === 'applied' && s.ackValue !== undefined ? JSON.stringify(s.ackValue) : '';
    packed += `${packed === '' ? '' : RECORD}${s.mode}${UNIT}${packedField(s.field)}${UNIT}${pendingDigest(s.read.raw)}${UNIT}${s.read.entry.version}${UNIT}${acked}`;
  }
  if (ackedAt !== undefined) packed += `${packed === '' ? '' : RECORD}stamp${UNIT}${ACKED_AT_FIELD}${UNIT}${UNIT}0${UNIT}${JSON.stringify(ackedAt)}`;
  return packed;
}

/** A glob pattern matching `text` literally (SCAN's MATCH). */
const globEscape = (text: string): string => text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);

/**
 * The servers whose keys a SCAN walks: each master of a Cluster (a command without a key goes to any one
 * of them, and the prefix's slot lives on one), else the connection's server.
 */
export function scannedServers(redis: Redis): Redis[] {
  const client: unknown = redis;
  return client instanceof Cluster ? client.nodes('master') : [redis];
}

/** Runs a pipeline or transaction and throws the first command error instead of returning it. */
export async function execOrThrow(commands: ChainableCommander): Promise<unknown[]> {
  const results = (await commands.exec()) ?? [];
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
