import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { staleSources } from './fresh-build.js';

describe('staleSources (the freshness check before tests that run dist/)', () => {
  let scratch: string;
  /** Writes `file` in the scratch checkout, modified `at` seconds after the epoch. */
  const write = async (file: string, at: number): Promise<void> => {
    await mkdir(dirname(join(scratch, file)), { recursive: true });
    await writeFile(join(scratch, file), '');
    await utimes(join(scratch, file), at, at);
  };
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'storesync-fresh-'));
    await write('src/built.ts', 100);
    await write('dist/src/built.js', 200);
    await write('src/edited.ts', 300);
    await write('dist/src/edited.js', 200);
    await write('bench/new.ts', 100);
    // Compiled because bench/ imports it; a source removed since leaves an output nothing can refresh.
    await write('test/support/shared.ts', 300);
    await write('dist/test/support/shared.js', 200);
    await write('dist/src/removed.js', 200);
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('names each source newer than its output or without one, and nothing else', async () => {
    expect(await staleSources(scratch)).toEqual(['bench/new.ts', 'src/edited.ts', 'test/support/shared.ts']);
  });
});
