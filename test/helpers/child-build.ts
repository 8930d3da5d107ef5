/**
 * Test children that must really die (SIGKILL) run as separate Node processes; Node cannot run the
 * TypeScript sources, so `transpileForChild` writes plain JavaScript of src/ and of the child's entry
 * into a scratch folder under node_modules/.cache (where the project's packages resolve and the
 * package's ESM type applies). Types are not checked here: `tsc --noEmit` does that.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

/** Transpiles src/ and `entry` (a .ts path); returns the compiled entry and a clean-up. */
export async function transpileForChild(entry: string): Promise<{ file: string; remove(): Promise<void> }> {
  const out = join(ROOT, 'node_modules', '.cache', `storesync-child-${randomUUID()}`);
  const files = [...(await sources(join(ROOT, 'src'))), entry];
  for (const file of files) {
    const { outputText } = ts.transpileModule(await readFile(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
      fileName: file,
    });
    const target = join(out, relative(ROOT, file)).replace(/\.ts$/, '.js');
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, outputText);
  }
  return {
    file: join(out, relative(ROOT, entry)).replace(/\.ts$/, '.js'),
    remove: () => rm(out, { recursive: true, force: true }),
  };
}
