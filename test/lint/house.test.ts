import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { importCycles, importGraph } from './import-graph.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A cycle as a reader wants it in a failure: `src/a.ts → src/b.ts → src/a.ts`. */
const show = (cycle: readonly string[]): string => cycle.join(' → ');

describe('the house: no import cycle in src/ or bench/', () => {
  it('finds none, counting type-only imports and dynamic import() too', async () => {
    const cycles = importCycles(await importGraph(root, ['src', 'bench'])).map(show);
    expect(cycles, 'import cycles (split the shared part into a module both import)').toEqual([]);
  });

  describe('on a scratch tree', () => {
    let scratch: string;
    const write = async (file: string, text: string): Promise<void> => {
      await mkdir(dirname(join(scratch, file)), { recursive: true });
      await writeFile(join(scratch, file), text);
    };
    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'storesync-house-'));
      // sql-client.ts loads its drivers with import(); each driver imports the client's types back.
      await write(
        'src/erp/sql-client.ts',
        "export interface Client { q(): void }\nexport const open = async () => [(await import('./pg.js')).openPg(), (await import('./my.js')).m];\n",
      );
      await write('src/erp/pg.ts', "import type { Client } from './sql-client.js';\n\nexport const openPg = (): Client | undefined => undefined;\n");
      await write('src/erp/my.ts', "export type { Client } from './sql-client.js';\nexport const m = (): import('./sql-client.js').Client | undefined => undefined;\n");
      await write('src/erp/sql-open.ts', "import { m } from './my.js';\nimport { open } from './sql-client.js';\n\nexport const both = [m, open];\n");
      await write('src/sync/a.ts', "import { b } from './b.js';\n\nexport const a = b;\n");
      await write('src/sync/b.ts', "import { c } from './deep/c.js';\n\nexport const b = c;\n");
      await write('src/sync/deep/c.ts', "import { a } from '../a.js';\nimport { x } from 'node:fs';\n\nexport const c = [a, x];\n");
      await write('src/sync/self.ts', "export * from './self.js';\n");
    });
    afterAll(async () => {
      await rm(scratch, { recursive: true, force: true });
    });

    it('reports the shortest cycle through each module of a circle, type-only, re-export and dynamic edges included', async () => {
      const cycles = importCycles(await importGraph(scratch, ['src'])).map(show);
      expect(cycles).toEqual([
        'src/erp/my.ts → src/erp/sql-client.ts → src/erp/my.ts',
        'src/erp/pg.ts → src/erp/sql-client.ts → src/erp/pg.ts',
        'src/sync/a.ts → src/sync/b.ts → src/sync/deep/c.ts → src/sync/a.ts',
        'src/sync/self.ts → src/sync/self.ts',
      ]);
    });
  });
});

describe('the house: no file of src/ or bench/ over 400 lines (npm run lint)', () => {
  const eslint = new ESLint({ cwd: root, overrideConfigFile: join(root, 'eslint.config.js') });
  const lines = (n: number): string => `${Array.from({ length: n - 1 }, (_, i) => `export const x${i} = ${i};`).join('\n')}\nexport {};\n`;

  it.each(['src/sync/x.ts', 'bench/lib/x.ts'])('rejects 401 lines in %s and accepts 400', async (file) => {
    const [long] = await eslint.lintText(lines(401), { filePath: join(root, file) });
    expect(long?.messages.map((m) => m.message)).toEqual(['File has too many lines (401). Maximum allowed is 400.']);
    const [fits] = await eslint.lintText(lines(400), { filePath: join(root, file) });
    expect(fits?.messages).toEqual([]);
  });
});
