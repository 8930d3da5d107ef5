import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const configFile = join(root, 'eslint.config.js');

/** The rule ids ESLint reports for one source text linted as if it lived at `filePath` (relative to `cwd`). */
async function ruleIds(eslint: ESLint, code: string, filePath: string): Promise<(string | null)[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId);
}

describe('npm run lint enforces the layering of src/', () => {
  const eslint = new ESLint({ cwd: root, overrideConfigFile: configFile });

  it('rejects a store module that imports sync (an import pointing up)', async () => {
    const [result] = await eslint.lintText("import { startFlow } from '../sync/flow.js';\n\nexport const f = startFlow;\n", {
      filePath: join(root, 'src/store/x.ts'),
    });
    const messages = result?.messages ?? [];
    expect(messages.map((m) => m.ruleId)).toEqual(['no-restricted-imports']);
    expect(messages[0]?.message).toContain('store may not import');
  });

  it.each([
    ['src/config/x.ts', "import { log } from '../log.js';\nimport { StoreClient } from '../store/client.js';\n", 1],
    ['src/log.ts', "import { runDaemon } from './daemon.js';\n", 1],
    ['src/queue/x.ts', "import { pollSource } from '../erp/polling.js';\n", 1],
    ['src/erp/sinks/x.ts', "import { x } from '../../queue/connection.js';\n", 1],
    ['src/sync/inventory/x.ts', "import { x } from '../../ops/http-server.js';\n", 1],
    ['src/ops/x.ts', "import { x } from '../simulator/index.js';\n", 1],
    ['src/simulator/routes/x.ts', "import { x } from '../../store/client.js';\n", 1],
    ['src/daemon.ts', "import { x } from './cli/program.js';\n", 1],
  ])('rejects an upward or sideways import in %s', async (filePath, code, count) => {
    const ids = await ruleIds(eslint, `${code}\nexport {};\n`, join(root, filePath));
    expect(ids.filter((id) => id === 'no-restricted-imports')).toHaveLength(count);
  });

  it.each([
    ['src/erp/x.ts', "import { x } from '../store/dates.js';\n\nexport const z = x;\n"],
    ['src/sync/inventory/x.ts', "import { x } from '../../erp/polling.js';\nimport { y } from '../../queue/connection.js';\n\nexport const z = [x, y];\n"],
    ['src/ops/x.ts', "import { x } from '../sync/flow.js';\n\nexport const z = x;\n"],
    ['src/cli/demo/x.ts', "import { x } from '../../daemon.js';\nimport { y } from '../../simulator/index.js';\n\nexport const z = [x, y];\n"],
  ])('accepts a downward import in %s', async (filePath, code) => {
    expect(await ruleIds(eslint, code, join(root, filePath))).toEqual([]);
  });

  it('still requires the node: protocol inside a layer block', async () => {
    const ids = await ruleIds(eslint, "import { join } from 'path';\n\nexport const j = join;\n", join(root, 'src/store/x.ts'));
    expect(ids).toEqual(['no-restricted-imports']);
  });

  describe('import cycles', () => {
    // no-cycle follows imports on disk, so the two modules of the cycle are written to a scratch tree linted with the
    // project's config.
    let scratch: string;
    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'storesync-lint-'));
      await mkdir(join(scratch, 'src', 'sync'), { recursive: true });
      await writeFile(join(scratch, 'src', 'sync', 'a.ts'), "import { b } from './b.js';\n\nexport const a = (): number => b + 1;\n");
      await writeFile(join(scratch, 'src', 'sync', 'b.ts'), "import { a } from './a.js';\n\nexport const b = 1;\nexport const c = a;\n");
      await writeFile(join(scratch, 'src', 'sync', 'c.ts'), "import { b } from './b.js';\n\nexport const c = b;\n");
    });
    afterAll(async () => {
      await rm(scratch, { recursive: true, force: true });
    });

    it('rejects a module that imports a module importing it back', async () => {
      const scratchLint = new ESLint({ cwd: scratch, overrideConfigFile: configFile });
      const results = await scratchLint.lintFiles(['src/sync/*.ts']);
      const cycles = results
        .filter((r) => r.messages.some((m) => m.ruleId === 'import-x/no-cycle'))
        .map((r) => r.filePath.slice(scratch.length + 1));
      expect(cycles.sort()).toEqual(['src/sync/a.ts', 'src/sync/b.ts']);
    });
  });
});
