/**
 * The snapshot diff's scripts (issue 27, the diff compared in Redis): `compareRead` answers the indexes of
 * the changed rows of a chunk and stages every fingerprint, `stageRead` counts a key staged as changed
 * once, `absentPage` answers only the previous SKUs the read did not stage, page by page; `fingerprint`
 * keeps the value releases before it stored (whichever SHA-1 call the Node version has). Against a real
 * Redis under the test's own prefix; expected values are written out by hand or by the rule in the test.
 */
import { randomUUID } from 'node:crypto';

import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createRedis } from '../../../../src/queue/connection.js';
import { DiffState, fingerprint } from '../../../../src/sync/inventory/snapshot/diff-state.js';
import { deleteKeys } from '../../../support/redis.js';
import { REDIS_URL } from '../harness.js';

let redis: Redis;
let prefix: string;
let diffState: DiffState;

const key = (kind: string): string => `${prefix}:state:inv:${kind}:src`;
const code = (i: number): string => `K-${String(i).padStart(5, '0')}`;
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k);

beforeEach(() => {
  redis = createRedis(REDIS_URL);
  prefix = `test-${randomUUID()}`;
  diffState = new DiffState(redis, prefix);
});

afterEach(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

/** Every previous SKU `absentPage` answers from cursor '0' to the end, and how many calls answered some. */
async function allAbsent(): Promise<{ absent: Map<string, string>; calls: number; callsWithSome: number }> {
  const absent = new Map<string, string>();
  let cursor = '0';
  let calls = 0;
  let callsWithSome = 0;
  do {
    const [next, pairs] = await diffState.absentPage('src', cursor);
    calls++;
    if (pairs.length > 0) callsWithSome++;
    for (const [k, print] of pairs) {
      expect(absent.has(k), `${k} answered once`).toBe(false);
      absent.set(k, print);
    }
    cursor = next;
  } while (cursor !== '0');
  return { absent, calls, callsWithSome };
}

describe('compareRead: the changed rows of a chunk, compared and staged in Redis', () => {
  it('answers the indexes of new, changed and repeated keys, and stages every fingerprint (unchanged ones too)', async () => {
    await redis.hset(key('fp'), 'A', 'print-a', 'B', 'print-b', 'C', 'print-c', 'Z', 'print-z');
    // A unchanged, B changed, D new, A again in the same chunk (changed: its second read), C unchanged.
    const first = await diffState.compareRead('src', [
      ['A', 'print-a'],
      ['B', 'print-x'],
      ['D', 'print-d'],
      ['A', 'print-a'],
      ['C', 'print-c'],
    ]);
    expect(first).toEqual([1, 2, 3]);
    expect(await redis.hgetall(key('diff-next'))).toEqual({ A: 'print-a', B: 'print-x', C: 'print-c', D: 'print-d' });
    // Another chunk: C (unchanged, but read in the earlier chunk: changed), E new, then B back to its previous
    // fingerprint (read before: changed all the same).
    const second = await diffState.compareRead('src', [
      ['C', 'print-c'],
      ['E', 'print-e'],
      ['B', 'print-b'],
    ]);
    expect(second).toEqual([0, 1, 2]);
    // The previous fingerprints are not touched; Z (not read) is not staged.
    expect(await redis.hgetall(key('fp'))).toEqual({ A: 'print-a', B: 'print-b', C: 'print-c', Z: 'print-z' });
    expect(await redis.hgetall(key('diff-next'))).toEqual({ A: 'print-a', B: 'print-b', C: 'print-c', D: 'print-d', E: 'print-e' });
  });

  it('answers nothing for a chunk of unchanged rows, and nothing is asked for an empty one', async () => {
    await redis.hset(key('fp'), 'A', 'print-a', 'B', 'print-b');
    expect(await diffState.compareRead('src', [])).toEqual([]);
    expect(await diffState.compareRead('src', [['B', 'print-b'], ['A', 'print-a']])).toEqual([]);
    expect(await redis.hlen(key('diff-next'))).toBe(2);
  });

  it('answers indexes into the whole list when more than 1000 rows are compared in one call', async () => {
    // 2500 previous SKUs, K-00001 … K-02500, of fingerprint `p<i>`; the read gives odd i a new one, and K-00011
    // again at the end (index 2500: read before, changed).
    await redis.hset(key('fp'), ...range(1, 2500).flatMap((i) => [code(i), `p${i}`]));
    const prints = range(1, 2500).map((i): [string, string] => [code(i), i % 2 === 1 ? `q${i}` : `p${i}`]);
    prints.push([code(11), 'p11']);
    const expected = [...range(1, 2500).filter((i) => i % 2 === 1).map((i) => i - 1), 2500];
    expect(await diffState.compareRead('src', prints)).toEqual(expected);
    expect(await redis.hlen(key('diff-next'))).toBe(2500);
    expect(await redis.hget(key('diff-next'), code(11))).toBe('p11');
    expect(await redis.hget(key('diff-next'), code(2499))).toBe('q2499');
  });

  it('fails, staging nothing, when Redis answers an error', async () => {
    await redis.set(key('fp'), 'not a hash');
    await expect(diffState.compareRead('src', [['A', 'print-a']])).rejects.toThrow(/WRONGTYPE/);
    expect(await redis.exists(key('diff-next'))).toBe(0);
  });
});

describe("stageRead: the changed rows' count", () => {
  it('counts a key staged as changed once, in one call or over several, and stages the refused Codes', async () => {
    expect(await diffState.stageRead('src', [['B', '["B",null,{}]'], ['D', '["D",null,{}]'], ['A', '["A",null,{}]']], ['R1'])).toBe(3);
    // A again (already staged as changed), C new: one more; A's last row is the one kept.
    expect(await diffState.stageRead('src', [['C', '["C",null,{}]'], ['A', '["A",null,{"Stock":2}]']], [])).toBe(1);
    // The same key twice in one call counts once.
    expect(await diffState.stageRead('src', [['E', '["E",null,{}]'], ['E', '["E",null,{"Stock":1}]']], [])).toBe(1);
    // Refused Codes alone: nothing changed.
    expect(await diffState.stageRead('src', [], ['R2'])).toBe(0);
    expect(await diffState.stageRead('src', [], [])).toBe(0);
    expect(await redis.hlen(key('diff-rows'))).toBe(5);
    expect(await redis.hget(key('diff-rows'), 'A')).toBe('["A",null,{"Stock":2}]');
    expect((await redis.smembers(key('diff-kept'))).sort()).toEqual(['R1', 'R2']);
  });
});

describe('absentPage: the previous SKUs the read did not stage, found in Redis', () => {
  it('answers the absent SKUs of every page of a large previous snapshot, and only them', async () => {
    // 3000 previous SKUs (exactly three pages' worth), every 7th absent from the read: spread over the pages.
    await redis.hset(key('fp'), ...range(1, 3000).flatMap((i) => [code(i), `p${i}`]));
    await redis.hset(key('diff-next'), ...range(1, 3000).filter((i) => i % 7 !== 0).flatMap((i) => [code(i), `n${i}`]));
    const { absent, calls, callsWithSome } = await allAbsent();
    const expected = new Map(range(1, 3000).filter((i) => i % 7 === 0).map((i) => [code(i), `p${i}`]));
    expect(absent.size).toBe(428);
    expect(absent).toEqual(expected);
    expect(calls, 'read page by page').toBeGreaterThan(1);
    expect(callsWithSome, 'absent SKUs in several pages').toBeGreaterThan(1);
  });

  it('answers every previous SKU when the read staged none, over more than one page', async () => {
    await redis.hset(key('fp'), ...range(1, 2000).flatMap((i) => [code(i), `p${i}`]));
    const { absent, calls } = await allAbsent();
    expect(absent).toEqual(new Map(range(1, 2000).map((i) => [code(i), `p${i}`])));
    expect(calls).toBeGreaterThan(1);
  });

  it('answers nothing when the read staged every previous SKU, and the last absent one of a small hash', async () => {
    await redis.hset(key('fp'), ...range(1, 1500).flatMap((i) => [code(i), `p${i}`]));
    await redis.hset(key('diff-next'), ...range(1, 1500).flatMap((i) => [code(i), `p${i}`]));
    expect((await allAbsent()).absent.size).toBe(0);
    await redis.del(key('fp'), key('diff-next'));
    await redis.hset(key('fp'), 'A', 'print-a', 'B', 'print-b', 'C', 'print-c');
    await redis.hset(key('diff-next'), 'A', 'print-a', 'B', 'print-x');
    expect((await allAbsent()).absent).toEqual(new Map([['C', 'print-c']]));
  });

  it('answers nothing, ending at once, for a source without previous fingerprints', async () => {
    expect(await diffState.absentPage('src', '0')).toEqual(['0', []]);
  });
});

describe('fingerprint: the value stored by earlier releases, on every Node version', () => {
  // SHA-1 of the JSON text, base64url, first 11 characters, computed apart (Python's hashlib):
  // [["Price",12.5],["Stock",5]] → vC8SVtZhYpD; [["Barcode","4006381333931"],["Published",false],["Stock",0]] → b-iyDLpKgh2.
  it('hashes the fields but Code and SiteId, in name order, as before', () => {
    expect(fingerprint({ Code: 'A-1', SiteId: 2, Stock: 5, Price: 12.5 })).toBe('vC8SVtZhYpD');
    expect(fingerprint({ Stock: 5, Price: 12.5, Code: 'B-2' })).toBe('vC8SVtZhYpD');
    expect(fingerprint({ Stock: 0, Published: false, Code: 'X', Barcode: '4006381333931' })).toBe('b-iyDLpKgh2');
  });
});
