/**
 * The least work on storesync's stack (issue 27's `--floor` row): a process that does only what any
 * implementation of the ERP → store flow with the project's dependencies must do per item, and nothing
 * else, so that its CPU per synced item is a floor no version of the daemon can go below without leaving
 * the stack (BullMQ jobs on Redis, per-SKU state in Redis, one undici PUT per item):
 *
 * - a poll of the change log every second (pg, its id as the cursor, 5,000 rows a query), one script a chunk of 200
 *   rows writing each row's pending value into its SKU's hash (one HSET a SKU), and jobs of up to 50 SKUs
 *   spread over `concurrency` jobs (`Queue.addBulk`), as the daemon's producer queues them;
 * - a BullMQ worker running `concurrency` jobs at once: one script a job reading every SKU's hash
 *   (HGETALL), one PUT a SKU (the JSON body from the hash, its JSON answer read), one script a job writing
 *   the acknowledged value and dropping the pending one (HSET, HDEL).
 *
 * Left out, since a floor owes none of them: validation, coalescing, locks, versions, retries, metrics,
 * logs, the sales and fulfilment flows, the HTTP server. Run by `cli-bench.ts` as
 * `node dist/bench/lib/floor-child.js` with its settings in FLOOR_* variables; prints `floor ready` once
 * its worker runs.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Pool } from 'undici';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`floor-child: ${name} is not set`);
  return value;
};

const storeUrl = env('FLOOR_STORE_URL');
const hash = env('FLOOR_HASH');
const prefix = env('FLOOR_PREFIX');
const concurrency = Number(env('FLOOR_CONCURRENCY'));
const QUEUE = 'floor';
const BATCH = 50;
const MERGE_CHUNK = 200;
const LIMIT = 5000;

const redis = new Redis(env('FLOOR_REDIS_URL'), { maxRetriesPerRequest: null });
redis.defineCommand('floorMerge', {
  numberOfKeys: 0,
  // ARGV: key prefix, then (code, JSON) pairs.
  lua: `for i = 2, #ARGV, 2 do redis.call('HSET', ARGV[1] .. ARGV[i], 'p', ARGV[i + 1]) end return 0`,
});
redis.defineCommand('floorRead', {
  numberOfKeys: 0,
  lua: `local out = {} for i = 2, #ARGV do out[#out + 1] = redis.call('HGETALL', ARGV[1] .. ARGV[i]) end return out`,
});
redis.defineCommand('floorSettle', {
  numberOfKeys: 0,
  lua: `for i = 2, #ARGV, 2 do local k = ARGV[1] .. ARGV[i] redis.call('HSET', k, 'a', ARGV[i + 1]) redis.call('HDEL', k, 'p') end return 0`,
});
type FloorRedis = Redis & {
  floorMerge(...args: string[]): Promise<number>;
  floorRead(...args: string[]): Promise<string[][]>;
  floorSettle(...args: string[]): Promise<number>;
};
const scripts = redis as FloorRedis;
const keyPrefix = `${prefix}:s:`;

const store = new Pool(storeUrl, { connections: concurrency, pipelining: 1 });
const putPath = `/Api/Inventory?hash=${encodeURIComponent(hash)}&mode=default`;
const headers = { 'content-type': 'application/json' };

const queue = new Queue<{ skus: string[] }>(QUEUE, { connection: redis, prefix });
const worker = new Worker<{ skus: string[] }>(
  QUEUE,
  async (job) => {
    const skus = job.data.skus;
    const states = await scripts.floorRead(keyPrefix, ...skus);
    const settle: string[] = [keyPrefix];
    for (let i = 0; i < skus.length; i++) {
      const fields = states[i] ?? [];
      const at = fields.indexOf('p');
      if (at < 0 || at % 2 !== 0) continue;
      const body = fields[at + 1] as string;
      const res = await store.request({ method: 'PUT', path: putPath, headers, body });
      const answer = (await res.body.json()) as { data?: unknown };
      if (res.statusCode !== 200 || answer === null) throw new Error(`PUT ${skus[i]}: HTTP ${res.statusCode}`);
      settle.push(skus[i] as string, body);
    }
    await scripts.floorSettle(...settle);
  },
  { connection: redis.duplicate(), prefix, concurrency, removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } },
);

const db = new pg.Pool({ connectionString: env('FLOOR_PG_URL'), max: 1 });
// The log's own id: a single writer inserts whole cells at once, so an id cursor misses nothing (a cell's
// rows carry timestamps older than the last cell's newest, which a timestamp cursor would skip).
let lastId = '0';
let polling = false;

/** Reads every row past the cursor, merges it into its SKU's hash, and queues the SKUs. */
async function poll(): Promise<void> {
  if (polling) return;
  polling = true;
  try {
    for (;;) {
      const { rows } = await db.query<{ id: string; code: string; stock: number; price: string }>('SELECT id, code, stock, price FROM changes WHERE id > $1 ORDER BY id LIMIT $2', [
        lastId,
        LIMIT,
      ]);
      if (rows.length === 0) return;
      const skus: string[] = [];
      for (let start = 0; start < rows.length; start += MERGE_CHUNK) {
        const args: string[] = [keyPrefix];
        for (const row of rows.slice(start, start + MERGE_CHUNK)) {
          args.push(row.code, JSON.stringify({ InternalId: 0, Code: row.code, Stock: row.stock, Price: Number(row.price) }));
          skus.push(row.code);
        }
        await scripts.floorMerge(...args);
      }
      const size = Math.max(1, Math.min(BATCH, Math.ceil(skus.length / concurrency)));
      const jobs = [];
      for (let start = 0; start < skus.length; start += size) jobs.push({ name: 'skus', data: { skus: skus.slice(start, start + size) } });
      await queue.addBulk(jobs);
      lastId = (rows[rows.length - 1] as (typeof rows)[number]).id;
      if (rows.length < LIMIT) return;
    }
  } finally {
    polling = false;
  }
}

const timer = setInterval(() => void poll().catch((error: unknown) => console.error('floor poll failed', error)), 1000);
await worker.waitUntilReady();
console.log('floor ready');

process.once('SIGTERM', () => {
  clearInterval(timer);
  void Promise.allSettled([worker.close(), queue.close(), db.end(), store.close()]).then(() => {
    redis.disconnect();
    process.exit(0);
  });
});
