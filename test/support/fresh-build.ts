/**
 * For the tests that run the build (`bin/storesync.js`, `dist/`) instead of the sources. `npm test` builds
 * first, but `vitest run` alone would test whatever `dist/` holds, perhaps a build older than the code under
 * test. `freshBuild` rebuilds when a source of the build is newer than its output or has none; the files of
 * one run share the build (a lock file: one builds, the others wait, then find it fresh). Freshness is
 * judged per file by modification time, so `npm test`'s own build makes it a few hundred stats.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { waitFor } from '../../src/wait-for.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The folders tsconfig.build.json compiles (what they import from test/support is compiled too). */
const BUILT = ['src', 'bench'];
/** How long a build may take on a loaded machine before the tests waiting for it give up. */
export const BUILD_TIMEOUT_MS = 180_000;

async function files(dir: string, suffix: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(suffix)).map((e) => join(e.parentPath, e.name));
}

async function mtime(file: string): Promise<number | undefined> {
  return stat(file).then(
    (s) => s.mtimeMs,
    () => undefined,
  );
}

/**
 * The sources (relative to the package root) whose compiled file in `dist/` is missing or older than they are:
 * every .ts of src/ and bench/, and every other source that `dist/` holds an output of.
 */
export async function staleSources(root = ROOT): Promise<string[]> {
  const sources = new Set((await Promise.all(BUILT.map((dir) => files(join(root, dir), '.ts')))).flat().map((file) => relative(root, file)));
  for (const output of await files(join(root, 'dist'), '.js')) {
    const source = relative(join(root, 'dist'), output).replace(/\.js$/, '.ts');
    if (existsSync(join(root, source))) sources.add(source);
  }
  const stale: string[] = [];
  for (const source of [...sources].sort()) {
    const built = await mtime(join(root, 'dist', source.replace(/\.ts$/, '.js')));
    if (built === undefined || built < (await mtime(join(root, source)))!) stale.push(source);
  }
  return stale;
}

/** True while the process whose pid the lock file holds runs (a build killed with its test run leaves the file). */
async function held(lock: string): Promise<boolean> {
  const pid = Number(await readFile(lock, 'utf8').catch(() => ''));
  if (!pid) return existsSync(lock);
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    await rm(lock, { force: true });
    return false;
  }
}

/** Builds (`npm run build`'s tsc) unless `dist/` is fresh; resolves once it is. */
export async function freshBuild(root = ROOT): Promise<void> {
  if ((await staleSources(root)).length === 0) return;
  // One lock per checkout, outside it (node_modules may be shared between checkouts).
  const lock = join(tmpdir(), `storesync-build-${createHash('sha256').update(root).digest('hex').slice(0, 16)}.lock`);
  const took = await writeFile(lock, String(process.pid), { flag: 'wx' }).then(
    () => true,
    () => false,
  );
  if (!took) {
    await waitFor(async () => !(await held(lock)), { timeoutMs: BUILD_TIMEOUT_MS, intervalMs: 200, message: `the build another test file runs (lock ${lock})` });
    return freshBuild(root);
  }
  try {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, timeout: BUILD_TIMEOUT_MS }).catch((error: Error & { stdout?: string }) => {
      throw new Error(`dist/ was older than the sources and \`npm run build\` failed:\n${error.stdout ?? error.message}`, { cause: error });
    });
  } finally {
    await rm(lock, { force: true });
  }
  const stale = await staleSources(root);
  if (stale.length > 0) throw new Error(`dist/ is still older than ${stale.slice(0, 5).join(', ')} after \`npm run build\``);
}
