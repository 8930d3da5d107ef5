/**
 * Reservations: never publish stock that store sales have already taken.
 *
 * Why. A hosted store lowers its own stock when a sale is placed; the ERP counts the sale only once it
 * has booked it, minutes or hours later. An ERP figure pushed in between (goods received, a recount, the
 * reconcile) still counts the sold units and would put them back on sale. So from the moment storesync
 * sees a sale in one of `inventory.reservations.statuses`, its lines are reserved per SKU and site, and
 * the stock storesync publishes is
 *
 *     published = max(0, ERP stock − reserved − safety stock)
 *
 * for incremental pushes and for the reconcile alike (`published-stock.ts` computes it).
 *
 * Life of a reservation (one per sale and SKU):
 * - open: from the first pull that sees the sale; it applies to every ERP figure.
 * - booked at T, seen at S: the ERP has booked the sale (`erp_processed_at` = T in the SQL interface
 *   table, or `storesync sales processed`, T = the call's time). Releasing it at once would publish
 *   the ERP's old figure (which still counts the sale) until the poll that brings its new figure: the
 *   very oversell this prevents. So a booked reservation keeps applying to ERP figures whose version is
 *   a timestamp older than T, and stops applying to figures at or after T; for figures without a
 *   timestamp version, it applies to figures read before S (the read started before the booking was
 *   seen) and not to later ones. Publishing a little less for a moment is acceptable; more, never.
 *   The worker removes a booked reservation once the SKU's ERP figure has passed it.
 * - released: the sale was cancelled or rejected on the store (the store gave the units back), or
 *   `releaseAfterMinutes` passed. It stops applying at once.
 *
 * Never stale. Each SKU's reservations carry a version, raised by every change in the same script that
 * makes the change. A publish records the ERP version and the reservation version it was computed
 * from (`applied` fields `Stock` and `Stock@reservations`), and a publish computed from an older ERP
 * version or an older reservation version is never sent after a newer one (see `published-stock.ts`).
 * Every change queues the SKU, so its published figure is recomputed and pushed when it differs from
 * what the store last acknowledged, and also when equal after a reservation of a sale on the target's
 * own site was added or released: the store lowers that copy's stock when a sale is placed and raises
 * it when one is cancelled, so what it last acknowledged is no longer what it shows. Counters raised by
 * reserving and releasing only (a booking or a prune moves nothing on the store) tell the worker so
 * (`published-stock.ts`): `moves` for the Code, `moves:{site}` for each site's sales.
 *
 * Keys, under `redis.prefix` (next to the SKU state, `state:inv:…`):
 *   inv:res:{sku}            hash  "{site}:{sale}" → "qty|since[|bookedAt|seenAt]"; `version`, `moves`, `moves:{site}` → counters
 *   inv:ressale:{site}:{id}  hash  {state: open|booked|released, since, lines (JSON sku → qty), bookedAt,
 *                                   seenAt, releasedAt, reason}; booked and released records expire after
 *                                   `sales.stateTtlDays`, and until then keep a later pull from reserving
 *                                   the sale again
 *   inv:resopen              zset  "{site}:{sale}" of sales not yet booked, score = since (ms)
 *   inv:resskus              set   SKUs with at least one reservation (the reconcile reads only those)
 *   inv:resready             the reservation set was built; missing after a Redis loss: rebuilt at start
 * Plain text is parsed in Lua (never cjson-encoded there: it would round millisecond times). These
 * keys hold sale ids, SKUs and quantities only, never customer data or secrets.
 */
import type { Redis } from 'ioredis';

import { stateKey } from '../../../queue/connection.js';
import type { FlowDeps } from '../../flow.js';
import { execOrThrow } from '../state.js';

/** A sale's identity. */
export interface ReservedSaleKey {
  siteId: number;
  saleId: number;
}

/** One sale's reservation on one SKU. */
export interface Reservation extends ReservedSaleKey {
  quantity: number;
  /** When storesync first saw the sale (ms). */
  since: number;
  /** The ERP's booking time (ms), once booked. */
  bookedAt?: number;
  /** When storesync saw the booking (ms). */
  seenAt?: number;
  /** The stored text, the identity a prune compares against. */
  raw: string;
}

/** A SKU's reservations and their counters. */
export interface SkuReservations {
  /** Raised by every change. */
  version: number;
  /** Raised by the changes that follow a move of the store's own stock: reserving and releasing. */
  moves: number;
  /** The same, per site of the sales (a sale moves its own site's copy only); none kept before sites. */
  siteMoves?: ReadonlyMap<number, number>;
  entries: Reservation[];
}

/** A sale to reserve: its lines summed per SKU. */
export interface SaleLines extends ReservedSaleKey {
  since: number;
  lines: ReadonlyMap<string, number>;
}

/** A sale's reservation record. */
export interface ReservedSale extends ReservedSaleKey {
  state: 'open' | 'booked' | 'released';
  since: number;
  lines: Record<string, number>;
  bookedAt?: number;
  seenAt?: number;
  releasedAt?: number;
  reason?: string;
}

/** Totals for the gauges. */
export interface ReservationStats {
  /** Sales not yet booked. */
  open: number;
  /** Units those sales hold. */
  units: number;
  /** `since` of the oldest, or null. */
  oldestSince: number | null;
}

/** Sale entries in a SKU's reservation hash (its fields less the counters). */
const COUNT_ENTRIES = `
local function entries(key)
  local n = 0
  for _, field in ipairs(redis.call('HKEYS', key)) do
    if string.match(field, '^%d+:%d+$') then n = n + 1 end
  end
  return n
end
`;

const RESERVE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local siteMoves = 'moves:' .. string.match(ARGV[1], '^(%d+):')
redis.call('HSET', KEYS[1], 'state', 'open', 'since', ARGV[2], 'lines', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
for i = 4, #KEYS do
  redis.call('HSET', KEYS[i], ARGV[1], ARGV[2 * (i - 4) + 5])
  redis.call('HINCRBY', KEYS[i], 'version', 1)
  redis.call('HINCRBY', KEYS[i], 'moves', 1)
  redis.call('HINCRBY', KEYS[i], siteMoves, 1)
  redis.call('SADD', KEYS[3], ARGV[2 * (i - 4) + 4])
end
return 1
`;

const BOOK = `
if redis.call('HGET', KEYS[1], 'state') ~= 'open' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'booked', 'bookedAt', ARGV[2], 'seenAt', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[1])
for i = 3, #KEYS do
  local entry = redis.call('HGET', KEYS[i], ARGV[1])
  if entry then
    local qty, since = string.match(entry, '^([^|]+)|([^|]+)')
    redis.call('HSET', KEYS[i], ARGV[1], qty .. '|' .. since .. '|' .. ARGV[2] .. '|' .. ARGV[3])
    redis.call('HINCRBY', KEYS[i], 'version', 1)
  end
end
return 1
`;

const RELEASE = `${COUNT_ENTRIES}
local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'released' then return 0 end
local siteMoves = 'moves:' .. string.match(ARGV[1], '^(%d+):')
redis.call('HSET', KEYS[1], 'state', 'released', 'releasedAt', ARGV[2], 'reason', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
for i = 4, #KEYS do
  if redis.call('HDEL', KEYS[i], ARGV[1]) == 1 then
    redis.call('HINCRBY', KEYS[i], 'version', 1)
    redis.call('HINCRBY', KEYS[i], 'moves', 1)
    redis.call('HINCRBY', KEYS[i], siteMoves, 1)
    if entries(KEYS[i]) == 0 then redis.call('SREM', KEYS[3], ARGV[i + 1]) end
  end
end
return 1
`;

/** Removes booked entries that no longer apply; the version stays (no publish changes). */
const PRUNE = `${COUNT_ENTRIES}
for i = 2, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[i + 1] then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
if entries(KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
return 1
`;

interface ScriptCommands {
  resReserve(...keysAndArgs: Array<string | number>): Promise<number>;
  resBook(...keysAndArgs: Array<string | number>): Promise<number>;
  resRelease(...keysAndArgs: Array<string | number>): Promise<number>;
  resPrune(...keysAndArgs: Array<string | number>): Promise<number>;
}

/** `"{site}:{sale}"`, the member naming a sale everywhere. */
export function saleMember(key: ReservedSaleKey): string {
  return `${key.siteId}:${key.saleId}`;
}

function parseMember(member: string): ReservedSaleKey | null {
  const match = /^(\d+):(\d+)$/.exec(member);
  return match ? { siteId: Number(match[1]), saleId: Number(match[2]) } : null;
}

/** Reads a SKU's reservation hash (as returned by HGETALL). */
export function parseSkuReservations(hash: Record<string, string> | null | undefined): SkuReservations {
  const entries: Reservation[] = [];
  let version = 0;
  let moves = 0;
  const siteMoves = new Map<number, number>();
  for (const [member, raw] of Object.entries(hash ?? {})) {
    if (member === 'version') version = Number(raw);
    else if (member === 'moves') moves = Number(raw);
    else if (member.startsWith('moves:')) siteMoves.set(Number(member.slice('moves:'.length)), Number(raw));
    const key = parseMember(member);
    const [quantity, since, bookedAt, seenAt] = raw.split('|').map(Number);
    if (!key || quantity === undefined || since === undefined) continue;
    entries.push({
      ...key,
      quantity,
      since,
      raw,
      ...(bookedAt === undefined ? {} : { bookedAt }),
      ...(seenAt === undefined ? {} : { seenAt }),
    });
  }
  entries.sort((a, b) => a.since - b.since || a.saleId - b.saleId);
  return { version, moves, siteMoves, entries };
}

function parseSale(key: ReservedSaleKey, hash: Record<string, string>): ReservedSale | null {
  const state = hash.state;
  if (state !== 'open' && state !== 'booked' && state !== 'released') return null;
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  const optional = { bookedAt: number(hash.bookedAt), seenAt: number(hash.seenAt), releasedAt: number(hash.releasedAt), reason: hash.reason };
  return {
    ...key,
    state,
    since: Number(hash.since ?? 0),
    lines: JSON.parse(hash.lines ?? '{}') as Record<string, number>,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
}

/** Reads and changes the reservations of one Redis prefix; see the module comment. */
export class ReservationStore {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #ttlSeconds: number;

  /** `ttlSeconds`: how long a booked or released sale's record is kept (it must outlive the pull window). */
  constructor(redis: Redis, prefix: string, ttlSeconds: number) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#ttlSeconds = ttlSeconds;
    redis.defineCommand('resReserve', { lua: RESERVE });
    redis.defineCommand('resBook', { lua: BOOK });
    redis.defineCommand('resRelease', { lua: RELEASE });
    redis.defineCommand('resPrune', { numberOfKeys: 2, lua: PRUNE });
  }

  /** The key of a SKU's reservations (read by `InventoryState.read` in the worker's transaction). */
  skuKey(sku: string): string {
    return stateKey(this.#prefix, 'inv', 'res', sku);
  }

  #saleKey(key: ReservedSaleKey): string {
    return stateKey(this.#prefix, 'inv', 'ressale', key.siteId, key.saleId);
  }

  get #openKey(): string {
    return stateKey(this.#prefix, 'inv', 'resopen');
  }

  get #skusKey(): string {
    return stateKey(this.#prefix, 'inv', 'resskus');
  }

  get #readyKey(): string {
    return stateKey(this.#prefix, 'inv', 'resready');
  }

  get #commands(): ScriptCommands {
    return this.#redis as unknown as ScriptCommands;
  }

  /** Reserves each sale's lines unless the sale was seen before (open, booked or released); returns the SKUs changed. */
  async reserve(sales: readonly SaleLines[]): Promise<string[]> {
    const changed = new Set<string>();
    for (const sale of sales) {
      const skus = [...sale.lines.keys()];
      const member = saleMember(sale);
      const lines = JSON.stringify(Object.fromEntries(sale.lines));
      const args = skus.flatMap((sku) => [sku, `${sale.lines.get(sku)}|${sale.since}`]);
      const keys = [this.#saleKey(sale), this.#openKey, this.#skusKey, ...skus.map((sku) => this.skuKey(sku))];
      const done = await this.#commands.resReserve(keys.length, ...keys, member, sale.since, lines, ...args);
      if (done === 1) for (const sku of skus) changed.add(sku);
    }
    return [...changed];
  }

  /** Marks sales booked by the ERP at `bookedAt`, seen now (`seenAt`); returns the SKUs changed. */
  async book(bookings: ReadonlyArray<ReservedSaleKey & { bookedAt: number }>, seenAt: number): Promise<string[]> {
    const changed = new Set<string>();
    for (const booking of bookings) {
      const sale = await this.sale(booking);
      if (sale?.state !== 'open') continue;
      const skus = Object.keys(sale.lines);
      const keys = [this.#saleKey(booking), this.#openKey, ...skus.map((sku) => this.skuKey(sku))];
      const done = await this.#commands.resBook(keys.length, ...keys, saleMember(booking), booking.bookedAt, seenAt, this.#ttlSeconds);
      if (done === 1) for (const sku of skus) changed.add(sku);
    }
    return [...changed];
  }

  /** Releases sales at once (cancelled on the store, or timed out); returns the SKUs changed. */
  async release(keys: readonly ReservedSaleKey[], reason: string, at: number): Promise<string[]> {
    const changed = new Set<string>();
    for (const key of keys) {
      const sale = await this.sale(key);
      if (!sale || sale.state === 'released') continue;
      const skus = Object.keys(sale.lines);
      const redisKeys = [this.#saleKey(key), this.#openKey, this.#skusKey, ...skus.map((sku) => this.skuKey(sku))];
      const done = await this.#commands.resRelease(redisKeys.length, ...redisKeys, saleMember(key), at, this.#ttlSeconds, reason, ...skus);
      if (done === 1) for (const sku of skus) changed.add(sku);
    }
    return [...changed];
  }

  /** Removes booked entries of a SKU that no longer apply (unless changed meanwhile). */
  async prune(sku: string, entries: readonly Reservation[]): Promise<void> {
    if (entries.length === 0) return;
    await this.#commands.resPrune(this.skuKey(sku), this.#skusKey, sku, ...entries.flatMap((entry) => [saleMember(entry), entry.raw]));
  }

  /** A sale's reservation record, or null when it was never reserved (or its record expired). */
  async sale(key: ReservedSaleKey): Promise<ReservedSale | null> {
    return parseSale(key, await this.#redis.hgetall(this.#saleKey(key)));
  }

  /** Records of many sales in one round trip, in order. */
  async sales(keys: readonly ReservedSaleKey[]): Promise<Array<ReservedSale | null>> {
    if (keys.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const key of keys) pipeline.hgetall(this.#saleKey(key));
    const results = await execOrThrow(pipeline);
    return keys.map((key, i) => parseSale(key, (results[i] ?? {}) as Record<string, string>));
  }

  /** A SKU's reservations. */
  async forSku(sku: string): Promise<SkuReservations> {
    return parseSkuReservations(await this.#redis.hgetall(this.skuKey(sku)));
  }

  /** The reservations of every SKU that has some (the reconcile compares with published figures). */
  async all(): Promise<Map<string, SkuReservations>> {
    const skus = await this.#redis.smembers(this.#skusKey);
    const out = new Map<string, SkuReservations>();
    for (let start = 0; start < skus.length; start += 500) {
      const chunk = skus.slice(start, start + 500);
      const pipeline = this.#redis.pipeline();
      for (const sku of chunk) pipeline.hgetall(this.skuKey(sku));
      const results = await execOrThrow(pipeline);
      chunk.forEach((sku, i) => out.set(sku, parseSkuReservations(results[i] as Record<string, string>)));
    }
    return out;
  }

  /** Sales not yet booked, oldest first, with the time they were first seen. */
  async open(limit = -1): Promise<Array<ReservedSaleKey & { since: number }>> {
    const flat = await this.#redis.zrange(this.#openKey, 0, limit < 0 ? -1 : limit - 1, 'WITHSCORES');
    const out: Array<ReservedSaleKey & { since: number }> = [];
    for (let i = 0; i < flat.length; i += 2) {
      const key = parseMember(flat[i] ?? '');
      if (key) out.push({ ...key, since: Number(flat[i + 1]) });
    }
    return out;
  }

  /** Open sales, units and the oldest, for the gauges. */
  async stats(): Promise<ReservationStats> {
    const open = await this.open();
    const records = await this.sales(open);
    const units = records.reduce((sum, record) => sum + Object.values(record?.lines ?? {}).reduce((a, b) => a + b, 0), 0);
    return { open: open.length, units, oldestSince: open[0]?.since ?? null };
  }

  /** True once the reservation set was built (false after a Redis loss or on first use). */
  async isReady(): Promise<boolean> {
    return (await this.#redis.exists(this.#readyKey)) === 1;
  }

  /** Records that the reservation set is built. */
  async markReady(at: number): Promise<void> {
    await this.#redis.set(this.#readyKey, new Date(at).toISOString());
  }
}

/** The reservation store of `config` on `redis`. */
export function openReservationStore(redis: Redis, config: FlowDeps['config']): ReservationStore {
  return new ReservationStore(redis, config.redis.prefix, config.sales.stateTtlDays * 86_400);
}
