/**
 * The hand-mutation runner's parts (bench/lib/mutations.ts, `npm run mutate`): the lists under
 * test/mutations are valid and each mutation still applies to its file exactly once (a list gone stale
 * fails here, not in a mutation run), and the verdicts read from vitest's JSON report are right on small
 * hand-made reports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadMutations, mutate, verdictOf, type VitestReport } from '../../bench/lib/mutations.js';
import { packageRoot } from '../../src/config/load.js';

const root = packageRoot();

const report = (tests: Array<{ status: string; message?: string }>, file: { status?: string; message?: string } = {}): VitestReport => ({
  numTotalTests: tests.length,
  testResults: [
    {
      name: 'test/x.test.ts',
      status: file.status ?? (tests.some((t) => t.status === 'failed') ? 'failed' : 'passed'),
      ...(file.message === undefined ? {} : { message: file.message }),
      assertionResults: tests.map((t, i) => ({ fullName: `test ${i}`, status: t.status, failureMessages: t.message === undefined ? [] : [t.message] })),
    },
  ],
});

describe('the mutation lists', () => {
  const all = loadMutations(join(root, 'test', 'mutations'));

  it('hold at least 20 mutations, each naming existing test files', () => {
    expect(all.length).toBeGreaterThanOrEqual(20);
    for (const mutation of all) for (const test of mutation.tests) expect(() => readFileSync(join(root, test)), `${mutation.id}: ${test}`).not.toThrow();
  });

  it('apply each mutation to its file exactly once (a change to the code updates its list)', () => {
    for (const mutation of all) {
      const result = mutate(readFileSync(join(root, mutation.file), 'utf8'), mutation);
      expect('invalid' in result ? result.invalid : 'applies', `mutation ${mutation.id}`).toBe('applies');
    }
  });
});

describe('mutate', () => {
  it('replaces the one occurrence, and calls a find that is missing or not unique invalid', () => {
    expect(mutate('a < b', { file: 'f.ts', find: '<', replace: '<=' })).toEqual({ text: 'a <= b' });
    expect(mutate('a < b', { file: 'f.ts', find: '>', replace: '>=' })).toEqual({ invalid: 'find occurs 0 times in f.ts (it must occur exactly once)' });
    expect(mutate('a < b < c', { file: 'f.ts', find: '<', replace: '<=' })).toEqual({ invalid: 'find occurs 2 times in f.ts (it must occur exactly once)' });
  });
});

describe('verdictOf', () => {
  it('says survived when every test passed, naming how many ran', () => {
    expect(verdictOf(report([{ status: 'passed' }, { status: 'passed' }]))).toEqual({ verdict: 'survived', detail: '2 test(s) passed' });
  });

  it('says caught by an assertion when a failure is not a timeout, quoting its first line', () => {
    const verdict = verdictOf(report([{ status: 'failed', message: 'Test timed out in 30000ms.' }, { status: 'failed', message: 'AssertionError: expected 8 to be 0\n    at x' }]));
    expect(verdict).toEqual({ verdict: 'caught (assertion)', detail: 'test 1: AssertionError: expected 8 to be 0' });
  });

  it('says caught by a timeout only when every failure is a test, hook or waitFor timeout', () => {
    expect(verdictOf(report([{ status: 'failed', message: 'Error: Test timed out in 120000ms.' }, { status: 'passed' }])).verdict).toBe('caught (timeout only)');
    expect(verdictOf(report([{ status: 'failed', message: 'Error: timed out after 20000 ms waiting for the failover counted' }])).verdict).toBe('caught (timeout only)');
  });

  it("counts vitest's own timeout as a timeout when its report gives it the stack it made at the test's start (STACK_TRACE_ERROR)", () => {
    // What vitest's JSON report held for a test past its 30 s limit in audit 7 (its first lines).
    const timedOut = 'Error: STACK_TRACE_ERROR\n    at file:///work/test/store/transport.test.ts:120:3\n    at node_modules/@vitest/runner/dist/index.js:1:1';
    expect(verdictOf(report([{ status: 'failed', message: timedOut }])).verdict).toBe('caught (timeout only)');
    // Beside an assertion, the assertion is the catch, and the detail quotes it.
    expect(verdictOf(report([{ status: 'failed', message: timedOut }, { status: 'failed', message: 'AssertionError: expected 1 to be +0' }]))).toEqual({
      verdict: 'caught (assertion)',
      detail: 'test 1: AssertionError: expected 1 to be +0',
    });
    // An error of the code whose message merely names the words is no timeout.
    expect(verdictOf(report([{ status: 'failed', message: 'Error: STACK_TRACE_ERROR in the parser\n    at x' }])).verdict).toBe('caught (assertion)');
  });

  it('counts a file that failed with no test failing (a load error, a failed hook) as caught by a file error only, with its message', () => {
    expect(verdictOf(report([], { status: 'failed', message: 'SyntaxError: Unexpected token' }))).toEqual({ verdict: 'caught (file error only)', detail: 'test/x.test.ts: SyntaxError: Unexpected token' });
    // A hook that failed: its tests are skipped, none failed (audit 3 counted this as an assertion).
    expect(verdictOf(report([{ status: 'skipped' }, { status: 'skipped' }], { status: 'failed', message: '' })).verdict).toBe('caught (file error only)');
  });

  it('says caught by an assertion when one file fails by an assertion and another only as a file', () => {
    const verdict = verdictOf({
      numTotalTests: 1,
      testResults: [
        { name: 'test/a.test.ts', status: 'failed', message: '', assertionResults: [] },
        { name: 'test/b.test.ts', status: 'failed', message: '', assertionResults: [{ fullName: 'b 1', status: 'failed', failureMessages: ['AssertionError: expected 1 to be 2'] }] },
      ],
    });
    expect(verdict).toEqual({ verdict: 'caught (assertion)', detail: 'b 1: AssertionError: expected 1 to be 2' });
  });
});
