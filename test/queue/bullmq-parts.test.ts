import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import * as bullmq from 'bullmq';
import { beforeAll, describe, expect, it } from 'vitest';

import { DelayedError, Queue, UnrecoverableError, WaitingError, Worker } from '../../src/queue/bullmq-parts.js';
import { BUILD_TIMEOUT_MS, freshBuild } from '../support/fresh-build.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

describe("bullmq's parts loaded alone", () => {
  beforeAll(async () => {
    // The child process runs dist/: a build older than the sources would test old code.
    await freshBuild();
  }, BUILD_TIMEOUT_MS);

  it("are the classes bullmq's index exports", () => {
    expect(Queue).toBe(bullmq.Queue);
    expect(Worker).toBe(bullmq.Worker);
    expect(DelayedError).toBe(bullmq.DelayedError);
    expect(UnrecoverableError).toBe(bullmq.UnrecoverableError);
    expect(WaitingError).toBe(bullmq.WaitingError);
  });

  it("leave bullmq's index and its PostgreSQL backend unloaded by every module `storesync run` loads at start", async () => {
    // A fresh process: the suite itself has the index loaded (this file imports it). The command line's
    // module imports the daemon and every flow statically; only the dashboard, the demo, the simulator
    // and the ERP drivers are loaded on demand.
    const script = `
      const { createRequire } = await import('node:module');
      await import('./dist/src/cli/program.js');
      const require = createRequire(import.meta.url);
      const files = Object.keys(require.cache).map((file) => file.replaceAll('\\\\', '/'));
      const bullmq = files.filter((file) => file.includes('/node_modules/bullmq/'));
      const unwanted = bullmq.filter((file) => /\\/bullmq\\/dist\\/cjs\\/(index\\.js|postgres\\/)/.test(file));
      console.log(JSON.stringify({ bullmqLoaded: bullmq.length > 0, unwanted: unwanted.map((file) => file.slice(file.indexOf('bullmq/'))) }));
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    // bullmqLoaded guards the check itself: with no bullmq file seen, an empty list would prove nothing.
    expect(JSON.parse(stdout)).toEqual({ bullmqLoaded: true, unwanted: [] });
  });
});
