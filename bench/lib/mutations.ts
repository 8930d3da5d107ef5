/**
 * Hand mutations (`npm run mutate`, bench/mutate.ts): the lists under `test/mutations/*.json`, one single
 * plausible change each to a file of `src/`, and what a run of the tests that should catch it means.
 * StrykerJS would generate mutants by the thousand and re-run integration suites for each on two cores;
 * a short list of changes a person could plausibly make, each run against the tests of its area, says
 * as much about what the tests guard in minutes.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import ts from 'typescript';
import { z } from 'zod';

/** One mutation of a list. */
export const mutationSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9-]+$/, 'kebab-case'),
    file: z.string().min(1),
    /** The original text: it must occur exactly once in `file`. */
    find: z.string().min(1),
    replace: z.string(),
    /** The test files that should catch it, run alone. */
    tests: z.array(z.string().min(1)).min(1),
    /** The behaviour it breaks. */
    why: z.string().min(1),
  })
  .strict()
  .refine((m) => m.find !== m.replace, { message: 'replace must differ from find' });

/** A mutation, as listed. */
export type Mutation = z.infer<typeof mutationSchema>;

/** What running a mutation's tests says about them. */
export type Verdict = 'caught (assertion)' | 'caught (timeout only)' | 'caught (file error only)' | 'survived' | 'invalid';

/** Reads every list of `dir` (sorted by file name); throws naming the list, the entry and the field of a bad one. */
export function loadMutations(dir: string): Mutation[] {
  const all: Mutation[] = [];
  const seen = new Map<string, string>();
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.json')).sort()) {
    const raw: unknown = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    const list = z.array(mutationSchema).safeParse(raw);
    if (!list.success) {
      const issue = list.error.issues[0]!;
      throw new Error(`${name}: entry ${issue.path.join('.')}: ${issue.message}`);
    }
    for (const mutation of list.data) {
      const other = seen.get(mutation.id);
      if (other !== undefined) throw new Error(`${name}: mutation id ${mutation.id} is listed in ${other} too`);
      seen.set(mutation.id, name);
      all.push(mutation);
    }
  }
  return all;
}

/** Occurrences of `find` in `text` (overlapping ones counted). */
function occurrences(text: string, find: string): number {
  let count = 0;
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + 1)) count += 1;
  return count;
}

/** The mutated text of `original`, or why the mutation cannot apply (its `find` missing or not unique). */
export function mutate(original: string, mutation: Pick<Mutation, 'find' | 'replace' | 'file'>): { text: string } | { invalid: string } {
  const count = occurrences(original, mutation.find);
  if (count !== 1) return { invalid: `find occurs ${count} times in ${mutation.file} (it must occur exactly once)` };
  const at = original.indexOf(mutation.find);
  return { text: original.slice(0, at) + mutation.replace + original.slice(at + mutation.find.length) };
}

/** The part of vitest's JSON report (`--reporter=json`) a verdict reads. */
export interface VitestReport {
  numTotalTests?: number;
  testResults: Array<{
    name: string;
    status: string;
    message?: string;
    assertionResults: Array<{ fullName: string; status: string; failureMessages?: string[] | null }>;
  }>;
}

/**
 * vitest's own test and hook timeouts and those of `waitFor` (src/wait-for.ts). vitest gives its timeout
 * error the stack of an error it made when the test or hook began, whose message is `STACK_TRACE_ERROR`
 * (@vitest/runner, `makeTimeoutError`): the JSON report's failure then reads `Error: STACK_TRACE_ERROR`,
 * not "Test timed out" (audit 7 saw two such timeouts counted as assertions).
 */
const TIMEOUT = /(test|hook) timed out in \d+ ?ms|timed out after \d+ ?ms|^Error: STACK_TRACE_ERROR$/im;

/**
 * The verdict of a run of a mutant's tests: survived when every test passed; caught (timeout only) when
 * every failure was a timeout; caught (file error only) when no test failed but a file did (it failed to
 * load, or a hook failed and its tests were skipped: on a loaded machine that can be the file's own set-up
 * timing out, whatever the mutant; audit 3 saw it); otherwise caught (assertion), with the first failure of
 * a test that was not a timeout.
 */
export function verdictOf(report: VitestReport): { verdict: Exclude<Verdict, 'invalid'>; detail: string } {
  const failures: Array<{ test: string; message: string; file?: boolean }> = [];
  for (const file of report.testResults) {
    for (const test of file.assertionResults) {
      if (test.status === 'failed') failures.push({ test: test.fullName, message: (test.failureMessages ?? []).join('\n') || 'failed' });
    }
    if (file.status === 'failed' && !file.assertionResults.some((test) => test.status === 'failed')) {
      failures.push({ test: file.name, message: file.message || 'the file failed (no test of it failed)', file: true });
    }
  }
  if (failures.length === 0) return { verdict: 'survived', detail: `${report.numTotalTests ?? 0} test(s) passed` };
  if (failures.every((failure) => failure.file === true)) {
    const only = failures[0]!;
    return { verdict: 'caught (file error only)', detail: `${only.test}: ${(only.message.split('\n').find((text) => text.trim() !== '') ?? '').trim().slice(0, 200)}` };
  }
  const real = failures.find((failure) => failure.file !== true && !TIMEOUT.test(failure.message));
  const first = real ?? failures[0]!;
  const line = first.message.split('\n').find((text) => text.trim() !== '')?.trim() ?? '';
  return { verdict: real ? 'caught (assertion)' : 'caught (timeout only)', detail: `${first.test}: ${line.slice(0, 200)}` };
}

/**
 * Type checks one file's mutant against the project (tsconfig.json): a program is built once, and each
 * mutant reuses it with the one file replaced, every other file parsed once.
 */
export class MutantTypeCheck {
  readonly #options: ts.CompilerOptions;
  readonly #rootNames: string[];
  readonly #host: ts.CompilerHost;
  readonly #parsed = new Map<string, ts.SourceFile>();
  #program: ts.Program | undefined;

  constructor(readonly root: string) {
    const configPath = join(root, 'tsconfig.json');
    const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root);
    this.#options = { ...parsed.options, noEmit: true };
    this.#rootNames = parsed.fileNames;
    this.#host = ts.createCompilerHost(this.#options);
  }

  /** The type errors of `file` with `text` in place of its content (none: it compiles). */
  errors(file: string, text: string): string[] {
    const target = resolve(this.root, file);
    const base = this.#host;
    const host: ts.CompilerHost = {
      ...base,
      getSourceFile: (name, language, onError) => {
        if (resolve(name) === target) return ts.createSourceFile(name, text, language, true);
        let parsed = this.#parsed.get(name);
        if (parsed === undefined) {
          parsed = base.getSourceFile(name, language, onError);
          if (parsed !== undefined) this.#parsed.set(name, parsed);
        }
        return parsed;
      },
    };
    this.#program = ts.createProgram({ rootNames: this.#rootNames, options: this.#options, host, ...(this.#program ? { oldProgram: this.#program } : {}) });
    const source = this.#program.getSourceFile(target);
    if (source === undefined) return [`${file} is not part of tsconfig.json`];
    return [...this.#program.getSyntacticDiagnostics(source), ...this.#program.getSemanticDiagnostics(source)].map((diagnostic) => {
      const { line } = diagnostic.start === undefined ? { line: 0 } : source.getLineAndCharacterOfPosition(diagnostic.start);
      return `${relative(this.root, source.fileName)}:${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
  }
}

/** Where the original of `file` is kept while its mutant is on disk (outside the work tree, per checkout). */
export function backupPath(dir: string, root: string, file: string): string {
  return join(dir, createHash('sha256').update(`${root}\0${file}`).digest('hex').slice(0, 16));
}
