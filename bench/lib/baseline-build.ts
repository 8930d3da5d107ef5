/**
 * `--baseline <commit>`: a build of an earlier commit, run beside the current one in the same run. The
 * commit is checked out into a temporary git worktree outside the repository (the system temp folder),
 * given the current `node_modules` when its lockfile is the same (else `npm ci`), and compiled with its
 * own `tsconfig.build.json`; the worktree is removed when the run ends (`cleanup`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import type { Cleanup } from './cleanup.js';

const run = promisify(execFile);

/** A built checkout of the baseline commit. */
export interface BaselineBuild {
  /** The commit as given, and its full id. */
  readonly ref: string;
  readonly commit: string;
  /** The worktree's root: `bin/storesync.js` runs its `dist/`. */
  readonly root: string;
  /** How its dependencies were provided. */
  readonly modules: 'linked' | 'npm ci';
}

/** Checks out and builds `ref` of the repository at `root`; the worktree is removed by `cleanup`. */
export async function buildBaseline(root: string, ref: string, cleanup: Cleanup, log: (line: string) => void): Promise<BaselineBuild> {
  const git = (...args: string[]) => run('git', ['-C', root, ...args], { maxBuffer: 64 * 1024 * 1024 });
  const commit = (await git('rev-parse', '--verify', `${ref}^{commit}`).catch(() => {
    throw new Error(`--baseline ${ref}: not a commit of ${root}`);
  })).stdout.trim();
  const parent = mkdtempSync(join(tmpdir(), 'storesync-baseline-'));
  const dir = join(parent, commit.slice(0, 12));
  cleanup.defer(`baseline worktree ${dir}`, async () => {
    await git('worktree', 'remove', '--force', dir).catch(() => {});
    rmSync(parent, { recursive: true, force: true });
    await git('worktree', 'prune');
  });
  await git('worktree', 'add', '--detach', dir, commit);
  const lock = (folder: string): string | undefined => {
    const file = join(folder, 'package-lock.json');
    return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  };
  const sameLock = lock(root) !== undefined && lock(root) === lock(dir) && existsSync(join(root, 'node_modules'));
  if (sameLock) symlinkSync(realpathSync(join(root, 'node_modules')), join(dir, 'node_modules'), 'dir');
  else {
    log(`baseline ${ref}: its package-lock.json differs: npm ci`);
    await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
  }
  const tsc = join(dir, 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 }).catch((error: { stdout?: string }) => {
    throw new Error(`--baseline ${ref}: its build failed: ${error.stdout?.slice(0, 2000) ?? String(error)}`);
  });
  log(`baseline ${ref} (${commit.slice(0, 12)}) built in ${dir} (node_modules ${sameLock ? 'linked: same lockfile' : 'installed by npm ci'})`);
  return { ref, commit, root: dir, modules: sameLock ? 'linked' : 'npm ci' };
}
