/**
 * The ERP side of a reconcile staged in Redis (issue 27), so that the process holds a page of it at a
 * time, whatever the catalogue's size. Per run (keys `state:inv:recon:{run}:…`, deleted before the run
 * returns and set to expire a day after, should a crash leave them):
 * - `erp`: SKU → its records as JSON, `[[source index, cursor, fields], …]` in the order they were read;
 * - `order`: the SKUs in the order their first record was read (a list: the missing SKUs and the
 *   store-rejects entries are gone through in the ERP's order, as when the side was one map);
 * - `seen:any`, `seen:{site}`: the SKUs the store showed, on any site read and on each site;
 * - `queue`: the queue items of the differences, with their priority, until the reads are complete; then
 *   those that create the missing targets and act on the orphans;
 * - `absent`: the ERP SKUs the store showed on no site read, in the ERP's order;
 * - `differing`, `differing:skus`: the targets found different and their SKUs (sets: each counted once);
 * - distinct lists (`set`, a list of each member the first time it was added, and its set): `others` (store
 *   codes with no ERP record), `orphans` (those no ERP source has) and `orphans:change` (the targets the
 *   orphan action changes), `dry` (the targets a dry run would queue).
 * A page (`page`) is an `ErpSnapshot` of a few SKUs' records, added source after source as the whole
 * side was, so that its rows and their order per SKU are those the whole side had.
 */
import { randomUUID } from 'node:crypto';

import type { Redis } from 'ioredis';

import type { Cursor } from '../../../erp/types.js';
import { stateKey } from '../../../queue/connection.js';
import { ErpSnapshot } from '../snapshot/index.js';
import { codeOf } from '../target-key.js';
import type { QueueItem } from './reconcile-queue.js';

/** SKUs per HMGET, LRANGE and page. */
export const STAGE_CHUNK = 1000;

/** Seconds the staging keys outlive a run that crashed before deleting them. */
const STAGING_TTL = 86_400;

/** One staged record: its source's index (in the reconcile's list of sources), its cursor, its fields. */
type StagedRecord = [number, Cursor, Record<string, unknown>];

/** A record to stage. */
export interface RecordToStage {
  sku: string;
  source: number;
  cursor: Cursor;
  fields: Record<string, unknown>;
}

/** A queue item staged with the priority of its fix. */
export interface StagedItem extends QueueItem {
  priority: number;
}

/** The staged lists of distinct members (see the module comment). */
export type DistinctList = 'others' | 'orphans' | 'orphans:change' | 'dry';

const DISTINCT_LISTS: readonly DistinctList[] = ['others', 'orphans', 'orphans:change', 'dry'];

/**
 * Adds members (ARGV[2…]) to a distinct list: each not yet in its set (KEYS[1]) is added to it and pushed
 * on its list (KEYS[2]), in one step, so that a command sent again after its reply was lost (ioredis
 * resends it on reconnect) cannot leave a member in the set and not on the list. Both keys expire after
 * ARGV[1] seconds. Returns the positions (1-based) of the members it added, in order.
 */
const ADD_DISTINCT = `
local fresh = {}
for i = 2, #ARGV do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[2], ARGV[i])
    fresh[#fresh + 1] = i - 1
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
if #fresh > 0 then redis.call('EXPIRE', KEYS[2], ARGV[1]) end
return fresh
`;

/** The staging keys of one reconcile run; see the module comment. */
export class ReconcileStaging {
  readonly #redis: Redis;
  readonly #base: string;
  readonly #sources: readonly string[];
  /** Sites with a `seen:{site}` key. */
  readonly #sites = new Set<number>();

  constructor(redis: Redis, prefix: string, sources: readonly string[]) {
    this.#redis = redis;
    this.#base = stateKey(prefix, 'inv', 'recon', randomUUID());
    this.#sources = sources;
  }

  #key(...parts: Array<string | number>): string {
    return [this.#base, ...parts].join(':');
  }

  /** Adds records (of one chunk) to the staged side, STAGE_CHUNK at a time. */
  async stage(records: readonly RecordToStage[]): Promise<void> {
    for (let start = 0; start < records.length; start += STAGE_CHUNK) await this.#stageSome(records.slice(start, start + STAGE_CHUNK));
  }

  async #stageSome(records: readonly RecordToStage[]): Promise<void> {
    const bySku = new Map<string, StagedRecord[]>();
    for (const { sku, source, cursor, fields } of records) {
      let list = bySku.get(sku);
      if (list === undefined) bySku.set(sku, (list = []));
      list.push([source, cursor, fields]);
    }
    const skus = [...bySku.keys()];
    const before = await this.#redis.hmget(this.#key('erp'), ...skus);
    const pairs: string[] = [];
    const added: string[] = [];
    skus.forEach((sku, i) => {
      const earlier = before[i];
      const mine = bySku.get(sku)!;
      if (earlier === null || earlier === undefined) added.push(sku);
      pairs.push(sku, JSON.stringify(earlier === null || earlier === undefined ? mine : [...(JSON.parse(earlier) as StagedRecord[]), ...mine]));
    });
    const multi = this.#redis.multi().hset(this.#key('erp'), ...pairs).expire(this.#key('erp'), STAGING_TTL);
    if (added.length > 0) multi.rpush(this.#key('order'), ...added).expire(this.#key('order'), STAGING_TTL);
    await execAll(multi);
  }

  /** An `ErpSnapshot` of the records of `skus` (those the ERP has), added source after source. */
  async page(skus: Iterable<string>): Promise<ErpSnapshot> {
    const wanted = [...new Set(skus)];
    const erp = new ErpSnapshot();
    if (wanted.length === 0) return erp;
    const staged = await this.#redis.hmget(this.#key('erp'), ...wanted);
    const rows: Array<{ sku: string; record: StagedRecord }> = [];
    wanted.forEach((sku, i) => {
      const text = staged[i];
      if (typeof text === 'string') for (const record of JSON.parse(text) as StagedRecord[]) rows.push({ sku, record });
    });
    // Stable: per source, the SKUs' records in the order they were read.
    rows.sort((a, b) => a.record[0] - b.record[0]);
    for (const { sku, record } of rows) erp.add(this.#sources[record[0]]!, sku, { cursor: record[1], fields: record[2] });
    return erp;
  }

  /** Marks `skus` seen by the store: on any site, and each on its sites. */
  async markSeen(seen: ReadonlyMap<string, ReadonlySet<number>>): Promise<void> {
    if (seen.size === 0) return;
    const multi = this.#redis.multi().hset(this.#key('seen', 'any'), ...[...seen.keys()].flatMap((sku) => [sku, '1'])).expire(this.#key('seen', 'any'), STAGING_TTL);
    const bySite = new Map<number, string[]>();
    for (const [sku, sites] of seen) {
      for (const site of sites) {
        let list = bySite.get(site);
        if (list === undefined) bySite.set(site, (list = []));
        list.push(sku, '1');
      }
    }
    for (const [site, pairs] of bySite) {
      this.#sites.add(site);
      multi.hset(this.#key('seen', site), ...pairs).expire(this.#key('seen', site), STAGING_TTL);
    }
    await execAll(multi);
  }

  /** Where the store showed each of `skus`: on any site read (`any`), and per site. */
  async seen(skus: readonly string[], sites: Iterable<number>): Promise<{ any: Set<string>; on: Map<number, Set<string>> }> {
    const any = new Set<string>();
    const on = new Map<number, Set<string>>();
    if (skus.length === 0) return { any, on };
    const wanted = [...new Set(sites)].filter((site) => this.#sites.has(site));
    const multi = this.#redis.multi().hmget(this.#key('seen', 'any'), ...skus);
    for (const site of wanted) multi.hmget(this.#key('seen', site), ...skus);
    const [anyFlags, ...siteFlags] = (await execAll(multi)) as Array<Array<string | null>>;
    skus.forEach((sku, i) => anyFlags![i] !== null && any.add(sku));
    wanted.forEach((site, s) => on.set(site, new Set(skus.filter((_, i) => siteFlags[s]![i] !== null))));
    return { any, on };
  }

  /** The staged SKUs, STAGE_CHUNK at a time, in the order their first record was read. */
  skus(): AsyncGenerator<string[]> {
    return this.#list('order', STAGE_CHUNK);
  }

  /** Stages ERP SKUs the store showed on no site read, in order. */
  async stageAbsent(skus: readonly string[]): Promise<void> {
    if (skus.length === 0) return;
    await execAll(this.#redis.multi().rpush(this.#key('absent'), ...skus).expire(this.#key('absent'), STAGING_TTL));
  }

  /** The absent SKUs, STAGE_CHUNK at a time, in the order they were staged. */
  absent(): AsyncGenerator<string[]> {
    return this.#list('absent', STAGE_CHUNK);
  }

  /** Marks targets found different (and their SKUs, `codeOf`). */
  async markDiffering(targets: Iterable<string>): Promise<void> {
    const keys = [...targets];
    if (keys.length === 0) return;
    const multi = this.#redis.multi().sadd(this.#key('differing'), ...keys).expire(this.#key('differing'), STAGING_TTL);
    multi.sadd(this.#key('differing', 'skus'), ...keys.map(codeOf)).expire(this.#key('differing', 'skus'), STAGING_TTL);
    await execAll(multi);
  }

  /** The distinct targets found different and their distinct SKUs. */
  async differing(): Promise<{ targets: number; skus: number }> {
    const [targets, skus] = (await execAll(this.#redis.multi().scard(this.#key('differing')).scard(this.#key('differing', 'skus')))) as [number, number];
    return { targets, skus };
  }

  /** Adds `members` to a distinct list; returns those it did not hold yet, in order (each once). */
  async addDistinct(list: DistinctList, members: Iterable<string>): Promise<string[]> {
    const wanted = [...members];
    if (wanted.length === 0) return [];
    const fresh = (await this.#redis.eval(ADD_DISTINCT, 2, this.#key(list, 'set'), this.#key(list), STAGING_TTL, ...wanted)) as number[];
    return fresh.map((index) => wanted[index - 1]!);
  }

  /** A distinct list's members, STAGE_CHUNK at a time, in the order first added. */
  distinct(list: DistinctList): AsyncGenerator<string[]> {
    return this.#list(list, STAGE_CHUNK);
  }

  async *#list(name: string, size: number): AsyncGenerator<string[]> {
    for (let start = 0; ; start += size) {
      const chunk = await this.#redis.lrange(this.#key(name), start, start + size - 1);
      if (chunk.length > 0) yield chunk;
      if (chunk.length < size) return;
    }
  }

  /** Stages queue items, in order. */
  async queue(items: readonly StagedItem[]): Promise<void> {
    if (items.length === 0) return;
    await execAll(this.#redis.multi().rpush(this.#key('queue'), ...items.map((item) => JSON.stringify(item))).expire(this.#key('queue'), STAGING_TTL));
  }

  /** The staged queue items, `size` at a time, in the order they were staged. */
  async *queued(size: number): AsyncGenerator<StagedItem[]> {
    for await (const chunk of this.#list('queue', size)) yield chunk.map((text) => JSON.parse(text) as StagedItem);
  }

  /** Deletes the run's keys. */
  async clear(): Promise<void> {
    const distinct = DISTINCT_LISTS.flatMap((list) => [this.#key(list), this.#key(list, 'set')]);
    const keys = [this.#key('erp'), this.#key('order'), this.#key('queue'), this.#key('absent'), this.#key('differing'), this.#key('differing', 'skus'), ...distinct];
    await this.#redis.unlink(...keys, this.#key('seen', 'any'), ...[...this.#sites].map((site) => this.#key('seen', site)));
  }
}

/** Runs a MULTI; throws the first command's error. */
async function execAll(multi: ReturnType<Redis['multi']>): Promise<unknown[]> {
  const results = (await multi.exec()) ?? [];
  for (const [error] of results) if (error) throw error;
  return results.map(([, value]) => value);
}
