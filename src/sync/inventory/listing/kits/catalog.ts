/**
 * The compositions storesync knows, in Redis under the prefix (never in process memory: a catalog of
 * 10,000 kits costs the process nothing between reads):
 *   kit:codes             set     every kit code
 *   kit:direct:{kit}      string  JSON { source, components }: the kit's own rows, as its source gave them
 *   kit:leaves:{kit}      string  JSON KitComponent[] (nested kits resolved through) or { cycle }
 *   kit:in:{code}         set     the kits containing `code`, directly or through another kit: the reverse
 *                                 index a component's change re-queues its kits with
 *   kit:src:{source}      set     the kits a source defined at its last complete read
 *   kit:refused:{source}  hash    kit (or the row's ref) → JSON issues of the rows refused at that read
 *   kit:read:{source}     string  when the source's last complete read was written (an empty one too)
 *   kit:cursor:{source}   string  JSON cursor of the source's `changes` query (changes.ts; drain-source.ts)
 * `writeComposition` replaces one source's part of it; the other sources' kits stay.
 */
import type { Redis } from 'ioredis';

import type { ValidationIssue } from '../../../../errors.js';
import { stateKey } from '../../../../queue/connection.js';
import { execOrThrow } from '../../state.js';
import { cyclesOf, descendants, groupRows, isCycle, type KitComponent, type KitCycle, type KitRow, resolveAll,type Resolved } from './composition.js';

/** The compositions storesync knows, kept in Redis under the prefix (memory independent of the catalog). */
export interface KitCatalog {
  /**
   * The kit's leaf components (nested kits resolved through, quantities multiplied), or undefined when
   * `code` is not a kit. A kit in a cycle resolves to `{ cycle: string[] }` (the codes of the cycle, in order).
   */
  explode(code: string): Promise<readonly KitComponent[] | KitCycle | undefined>;
  /** Every kit that contains `component`, directly or through another kit (the reverse index, not a scan). */
  kitsContaining(component: string): Promise<readonly string[]>;
  /** `explode` of several codes in one round trip. */
  explodeMany(codes: readonly string[]): Promise<Map<string, Resolved>>;
  /** `kitsContaining` of several codes in one round trip (the union). */
  kitsContainingAny(codes: readonly string[]): Promise<Set<string>>;
  /** The kit's own rows (its direct components) and the source that gave them, or undefined when not a kit. */
  direct(code: string): Promise<{ source: string; components: KitComponent[] } | undefined>;
  /** Every kit and what it resolves to (the reconcile compares kits with their figures). */
  all(): Promise<Map<string, Resolved>>;
  /** The rows a source refused at its last complete read, by kit (or by the row's ref when it had no kit). */
  refused(source: string): Promise<Map<string, ValidationIssue[]>>;
}

/** What one complete read of a composition source changed. */
export interface CompositionWrite {
  /** Kits the source defines now. */
  kits: number;
  /** Kits whose leaf components or quantities changed (added and removed ones included): to re-compute. */
  changed: string[];
  /** Cycles refused, each as its codes in order (their kits, and kits containing them, are unwritten). */
  cycles: string[][];
}

/** The key of one part of the catalog. */
function key(prefix: string, ...parts: string[]): string {
  return stateKey(prefix, 'kit', ...parts);
}

/** The catalog of a runtime's Redis connection and prefix. */
export function redisKitCatalog(redis: Redis, prefix: string): KitCatalog {
  const explodeMany = async (codes: readonly string[]): Promise<Map<string, Resolved>> => {
    const out = new Map<string, Resolved>();
    if (codes.length === 0) return out;
    const raws = await redis.mget(codes.map((code) => key(prefix, 'leaves', code)));
    codes.forEach((code, i) => {
      const raw = raws[i];
      if (raw) out.set(code, JSON.parse(raw) as Resolved);
    });
    return out;
  };
  const kitsContainingAny = async (codes: readonly string[]): Promise<Set<string>> => {
    if (codes.length === 0) return new Set();
    return new Set(await redis.sunion(codes.map((code) => key(prefix, 'in', code))));
  };
  return {
    explodeMany,
    kitsContainingAny,
    explode: async (code) => (await explodeMany([code])).get(code),
    all: async () => explodeMany(await redis.smembers(key(prefix, 'codes'))),
    kitsContaining: async (component) => [...(await kitsContainingAny([component]))],
    direct: async (code) => {
      const raw = await redis.get(key(prefix, 'direct', code));
      return raw ? (JSON.parse(raw) as { source: string; components: KitComponent[] }) : undefined;
    },
    refused: async (source) => {
      const hash = await redis.hgetall(key(prefix, 'refused', source));
      return new Map(Object.entries(hash).map(([kit, raw]) => [kit, JSON.parse(raw) as ValidationIssue[]]));
    },
  };
}

/** Rows refused at a read, each with its kit when it named one. */
export type RefusedRows = ReadonlyArray<{ kit?: string; ref: string; issues: ValidationIssue[] }>;

/**
 * Replaces what `source` defines with `rows` (one complete read of it) and records the rows it refused;
 * resolves every kit again (nested kits may cross sources) and rewrites the leaves and the reverse index
 * of the kits that changed, in one transaction. A kit another source also defines is taken from this one.
 */
export async function writeComposition(redis: Redis, prefix: string, source: string, rows: Iterable<KitRow>, refused: RefusedRows = []): Promise<CompositionWrite> {
  const { removed: _removed, ...write } = await replaceKits(redis, prefix, source, { whole: groupRows(rows) }, refused);
  return write;
}

/**
 * The kits one poll of a `changes` query read complete: each with its components now, or null when it
 * has none (a disabled bundle, an archived BoM: it is no longer a kit).
 */
export type KitChanges = ReadonlyMap<string, readonly KitComponent[] | null>;

/**
 * Applies what a poll of `source`'s `changes` query read: each kit of `changes` replaced whole by its
 * components, or removed (null; only when `source` gave it: another source's kit of that code stays);
 * every other kit, of this source or another, stays as it is. The refusals of the kits read are replaced
 * by `refused`'s. Nothing is written when every kit read is already stored as read and nothing was
 * refused (the overlap re-reads the same rows at every poll). Does not count as a complete read.
 */
export async function applyKitChanges(redis: Redis, prefix: string, source: string, changes: KitChanges, refused: RefusedRows = []): Promise<CompositionWrite & { removed: string[] }> {
  const kits = [...changes.keys()];
  const refusedKits = [...refusedByKit(refused).keys()];
  if (kits.length === 0 && refusedKits.length === 0) return { kits: 0, changed: [], cycles: [], removed: [] };
  if (refused.length === 0) {
    const [stored, refusals] = await Promise.all([redis.mget(kits.map((kit) => key(prefix, 'direct', kit))), redis.hmget(key(prefix, 'refused', source), ...kits)]);
    const same = kits.every((kit, i) => {
      const now = changes.get(kit);
      const raw = stored[i];
      if (now === null || now === undefined) return !raw || (JSON.parse(raw) as { source: string }).source !== source;
      if (!raw) return false;
      const entry = JSON.parse(raw) as { source: string; components: KitComponent[] };
      return entry.source === source && sameComponents(entry.components, now);
    });
    if (same && refusals.every((issues) => issues === null)) return { kits: kits.length, changed: [], cycles: [], removed: [] };
  }
  return { ...(await replaceKits(redis, prefix, source, { changes }, refused)), kits: kits.length };
}

/** Two lists of components alike, whatever their order. */
function sameComponents(a: readonly KitComponent[], b: readonly KitComponent[]): boolean {
  const sorted = (list: readonly KitComponent[]) => JSON.stringify([...list].sort((x, y) => (x.code < y.code ? -1 : x.code > y.code ? 1 : 0)));
  return sorted(a) === sorted(b);
}

/**
 * The one write of the catalog: `whole` replaces every kit `source` defines (a complete read), `changes`
 * only the kits it names (a poll of the change feed). Every kit is resolved again; the kits whose leaves
 * changed get their leaves and reverse index rewritten, in one transaction. `removed`: the kits of
 * `source` that left the catalog for having no components any more.
 */
async function replaceKits(
  redis: Redis,
  prefix: string,
  source: string,
  update: { whole: ReadonlyMap<string, KitComponent[]> } | { changes: KitChanges },
  refused: RefusedRows,
): Promise<CompositionWrite & { removed: string[] }> {
  const codes = await redis.smembers(key(prefix, 'codes'));
  const [directRaws, leafRaws] = codes.length === 0 ? [[], []] : await Promise.all([redis.mget(codes.map((code) => key(prefix, 'direct', code))), redis.mget(codes.map((code) => key(prefix, 'leaves', code)))]);
  const direct = new Map<string, { source: string; components: readonly KitComponent[] }>();
  const oldLeaves = new Map<string, string>();
  const oldDirect = new Map<string, readonly KitComponent[]>();
  codes.forEach((code, i) => {
    const raw = directRaws[i];
    if (raw) {
      const stored = JSON.parse(raw) as { source: string; components: KitComponent[] };
      oldDirect.set(code, stored.components);
      // A complete read replaces all of this source's kits; a poll of changes only those it read.
      if (stored.source !== source || !('whole' in update)) direct.set(code, stored);
    }
    const leaves = leafRaws[i];
    if (leaves) oldLeaves.set(code, leaves);
  });
  const written = new Map<string, readonly KitComponent[]>();
  const dropped: string[] = [];
  for (const [kit, components] of 'whole' in update ? update.whole : update.changes) {
    if (components !== null) written.set(kit, components);
    // A kit without components any more leaves the catalog, unless another source gives it.
    else if (direct.get(kit)?.source === source) {
      direct.delete(kit);
      dropped.push(kit);
    }
  }
  for (const [kit, components] of written) direct.set(kit, { source, components });
  const components = new Map([...direct].map(([kit, entry]) => [kit, entry.components]));
  const resolved = resolveAll(components);
  const changed = new Set<string>();
  for (const [kit, leaves] of resolved) if (oldLeaves.get(kit) !== JSON.stringify(leaves)) changed.add(kit);
  for (const kit of oldLeaves.keys()) if (!resolved.has(kit)) changed.add(kit);

  const multi = redis.multi();
  if ('whole' in update) {
    multi.del(key(prefix, 'src', source), key(prefix, 'refused', source));
    multi.set(key(prefix, 'read', source), String(Date.now()));
  } else {
    // The refusals of the kits read are replaced (a kit read again without bad rows has none).
    const read = [...update.changes.keys(), ...refusedByKit(refused).keys()];
    if (read.length > 0) multi.hdel(key(prefix, 'refused', source), ...read);
    if (dropped.length > 0) multi.srem(key(prefix, 'src', source), ...dropped);
  }
  if (written.size > 0) multi.sadd(key(prefix, 'src', source), ...written.keys());
  if (refused.length > 0) multi.hset(key(prefix, 'refused', source), Object.fromEntries(refusedByKit(refused)));
  // The reverse index of a changed kit: out of every code it contained, into every code it contains now.
  for (const kit of changed) {
    for (const code of descendants(kit, oldDirect)) multi.srem(key(prefix, 'in', code), kit);
    const leaves = resolved.get(kit);
    if (!leaves) {
      multi.del(key(prefix, 'direct', kit), key(prefix, 'leaves', kit));
      multi.srem(key(prefix, 'codes'), kit);
      continue;
    }
    multi.set(key(prefix, 'leaves', kit), JSON.stringify(leaves));
    multi.sadd(key(prefix, 'codes'), kit);
    if (!isCycle(leaves)) for (const code of descendants(kit, components)) multi.sadd(key(prefix, 'in', code), kit);
  }
  for (const [kit, entry] of written) multi.set(key(prefix, 'direct', kit), JSON.stringify({ source, components: entry }));
  await execOrThrow(multi);
  const cycles = cyclesOf(resolved);
  return { kits: written.size, changed: [...changed].sort(), cycles, removed: dropped.sort() };
}

/** Refused rows grouped by kit (the row's ref when it named none), as JSON issue lists. */
function refusedByKit(refused: RefusedRows): Map<string, string> {
  const byKit = new Map<string, ValidationIssue[]>();
  for (const { kit, ref, issues } of refused) {
    const id = kit !== undefined && kit !== '' ? kit : ref;
    byKit.set(id, [...(byKit.get(id) ?? []), ...issues]);
  }
  return new Map([...byKit].map(([kit, issues]) => [kit, JSON.stringify(issues)]));
}

/**
 * The kits sources among `sources` that have not completed a read yet (on this prefix, ever). Until they
 * have, a sale line of one of their kits would be taken for a plain code: the sales pull waits for them.
 */
export async function unreadKitSources(redis: Redis, prefix: string, sources: readonly string[]): Promise<string[]> {
  if (sources.length === 0) return [];
  const read = await redis.mget(...sources.map((source) => key(prefix, 'read', source)));
  return sources.filter((_, index) => read[index] === null);
}
