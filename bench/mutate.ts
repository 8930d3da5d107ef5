/**
 * `npm run mutate [-- --changed [BASE]] [-- --id ID] [-- --file PATH] [-- --skip-baseline]`: applies each
 * hand mutation of `test/mutations/*.json` alone (lib/mutations.ts), runs only its `tests` with vitest and
 * prints one verdict per mutation — caught (assertion), caught (timeout only), caught (file error only), survived, invalid (the
 * mutation does not apply, the mutant does not type check, or vitest could not run) — and a summary
 * line. `--changed` keeps the mutations of files changed since BASE (default: the merge-base with
 * `main`), committed or not. The tests first run once on the unmutated code (unless
 * `--skip-baseline`): a test failing there would make every mutant look caught. Each file is restored
 * after its run, on a failure or Ctrl-C too; its original is also kept outside the work tree and put
 * back by the next run should this one be killed. Exits 1 when a mutation survived or is invalid.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { Cleanup } from './lib/cleanup.js';
import { backupPath, loadMutations, MutantTypeCheck, mutate, type Mutation, type Verdict, verdictOf, type VitestReport } from './lib/mutations.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values, positionals } = parseArgs({
  options: {
    changed: { type: 'boolean', default: false },
    id: { type: 'string' },
    file: { type: 'string' },
    'skip-baseline': { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/** Files changed since `base` (default: the merge-base with main), in the work tree too, and new files. */
function changedFiles(base: string | undefined): Set<string> {
  const from = base ?? git('merge-base', 'main', 'HEAD');
  const lines = [...git('diff', '--name-only', from).split('\n'), ...git('ls-files', '--others', '--exclude-standard').split('\n')];
  return new Set(lines.filter((line) => line !== ''));
}

function select(all: Mutation[]): Mutation[] {
  let chosen = all;
  if (values.id !== undefined) chosen = chosen.filter((m) => m.id === values.id);
  if (values.file !== undefined) {
    const file = relative(root, resolve(values.file));
    chosen = chosen.filter((m) => m.file === file);
  }
  if (values.changed) {
    const changed = changedFiles(positionals[0]);
    chosen = chosen.filter((m) => changed.has(m.file));
  }
  return chosen;
}

const cleanup = new Cleanup();
cleanup.exitOnSignals(log);
const backups = join(tmpdir(), 'storesync-mutate');
mkdirSync(backups, { recursive: true });
const scratch = mkdtempSync(join(tmpdir(), 'storesync-mutate-run-'));
cleanup.defer('remove the run folder', () => rmSync(scratch, { recursive: true, force: true }));
/** Puts back the file of the mutant on disk, if one is (on Ctrl-C or a failure of the runner itself). */
let restoreCurrent: (() => void) | undefined;
cleanup.defer('restore the mutated file', () => restoreCurrent?.());

/** Runs `tests` with vitest; its JSON report, or undefined with what it printed when it wrote none. */
async function runTests(tests: readonly string[], name: string): Promise<{ report?: VitestReport; output: string }> {
  const out = join(scratch, `${name}.json`);
  const child = spawn(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=json', `--outputFile=${out}`, ...tests], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-4000)));
  child.stderr.on('data', (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-4000)));
  const stop = (): void => void child.kill('SIGTERM');
  process.once('exit', stop);
  await new Promise<void>((done) => child.once('close', () => done()));
  process.off('exit', stop);
  if (!existsSync(out)) return { output };
  return { report: JSON.parse(readFileSync(out, 'utf8')) as VitestReport, output };
}

/** Puts back the original of any file a killed run left mutated. */
function restoreLeftovers(list: Mutation[]): void {
  for (const file of new Set(list.map((m) => m.file))) {
    const backup = backupPath(backups, root, file);
    if (!existsSync(backup)) continue;
    writeFileSync(join(root, file), readFileSync(backup));
    rmSync(backup);
    log(`restored ${file}, left mutated by an interrupted run`);
  }
}

/** When `dist/`'s compiled copy of a source file was last written (ms), or undefined when there is none. */
function builtAt(file: string): number | undefined {
  const compiled = join(root, 'dist', file.replace(/\.ts$/, '.js'));
  return existsSync(compiled) ? statSync(compiled).mtimeMs : undefined;
}

/**
 * Builds `dist/` again from the restored sources when a mutant's tests rebuilt it (a test that needs a
 * fresh build, test/support/fresh-build.ts, compiles the mutant): otherwise the demo, a benchmark or the
 * next test that trusts `dist/` would run the mutant.
 */
function rebuildIfMutantBuilt(mutation: Mutation, before: number | undefined): void {
  if (builtAt(mutation.file) === before) return;
  log(`    dist/ was built from the mutant by its tests: building it again from the restored source`);
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
}

async function runMutation(mutation: Mutation, check: MutantTypeCheck): Promise<{ verdict: Verdict; detail: string }> {
  const path = join(root, mutation.file);
  if (!existsSync(path)) return { verdict: 'invalid', detail: `${mutation.file} does not exist` };
  const missing = mutation.tests.find((test) => !existsSync(join(root, test)));
  if (missing !== undefined) return { verdict: 'invalid', detail: `test file ${missing} does not exist` };
  const original = readFileSync(path, 'utf8');
  const mutant = mutate(original, mutation);
  if ('invalid' in mutant) return { verdict: 'invalid', detail: mutant.invalid };
  const errors = check.errors(mutation.file, mutant.text);
  if (errors.length > 0) return { verdict: 'invalid', detail: `no longer compiles: ${errors[0]}` };
  const backup = backupPath(backups, root, mutation.file);
  writeFileSync(backup, original);
  restoreCurrent = (): void => {
    writeFileSync(path, original);
    rmSync(backup, { force: true });
  };
  const built = builtAt(mutation.file);
  try {
    writeFileSync(path, mutant.text);
    const { report, output } = await runTests(mutation.tests, mutation.id);
    // No report: vitest itself could not run (not a test that failed), so the mutant says nothing.
    if (!report) return { verdict: 'invalid', detail: `vitest wrote no report: ${output.split('\n').find((line) => line.trim() !== '') ?? ''}` };
    return verdictOf(report);
  } finally {
    restoreCurrent();
    restoreCurrent = undefined;
    rebuildIfMutantBuilt(mutation, built);
  }
}

async function main(): Promise<number> {
  const all = loadMutations(join(root, 'test', 'mutations'));
  restoreLeftovers(all);
  const chosen = select(all);
  if (chosen.length === 0) {
    log(`no mutation selected (of ${all.length} listed)`);
    return 0;
  }
  if (!values['skip-baseline']) {
    const tests = [...new Set(chosen.flatMap((m) => m.tests))];
    log(`baseline: ${tests.length} test file(s) on the unmutated code`);
    const { report, output } = await runTests(tests, 'baseline');
    const baseline = report ? verdictOf(report) : { verdict: 'no report', detail: output };
    if (baseline.verdict !== 'survived') {
      log(`the tests fail without any mutation, so no verdict would mean anything: ${baseline.detail}`);
      return 2;
    }
  }
  const check = new MutantTypeCheck(root);
  const counts = new Map<Verdict, number>();
  for (const [i, mutation] of chosen.entries()) {
    const started = Date.now();
    const { verdict, detail } = await runMutation(mutation, check);
    counts.set(verdict, (counts.get(verdict) ?? 0) + 1);
    log(`[${i + 1}/${chosen.length}] ${verdict.padEnd(24)} ${mutation.id} (${mutation.file}, ${Math.round((Date.now() - started) / 1000)} s)`);
    log(`    ${verdict === 'survived' ? `breaks: ${mutation.why}; ` : ''}${detail}`);
  }
  const caught = (counts.get('caught (assertion)') ?? 0) + (counts.get('caught (timeout only)') ?? 0) + (counts.get('caught (file error only)') ?? 0);
  log(
    `${caught} of ${chosen.length} caught (${counts.get('caught (assertion)') ?? 0} by an assertion, ${counts.get('caught (timeout only)') ?? 0} by a timeout only, ` +
      `${counts.get('caught (file error only)') ?? 0} by a file's error only), ` +
      `${counts.get('survived') ?? 0} survived, ${counts.get('invalid') ?? 0} invalid`,
  );
  return (counts.get('survived') ?? 0) + (counts.get('invalid') ?? 0) > 0 ? 1 : 0;
}

main()
  .then(async (code) => {
    await cleanup.run(log);
    process.exit(code);
  })
  .catch(async (error: unknown) => {
    log(error instanceof Error ? error.message : String(error));
    await cleanup.run(log);
    process.exit(2);
  });
