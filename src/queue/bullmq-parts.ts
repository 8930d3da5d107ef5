/**
 * The parts of bullmq storesync uses (`Queue`, `Worker` and the errors a processor throws), loaded from
 * their own modules. bullmq's index also loads its PostgreSQL backend (about 250 KB of SQL), its relay,
 * flow producer, queue events and Valkey-Glide client adapter, none of which storesync uses, and an
 * idle daemon kept them: 500 KB of source, 1–1.5 MiB of heap, and fewer start-up compilations (issue 27's
 * idle RSS; bench/README.md, "Issue 27: idle RSS, where its spread comes from"). The dashboard's
 * bull-board adapter requires bullmq's index itself, so a daemon whose dashboard was opened loads it then.
 *
 * bullmq has no `exports` map, so its CommonJS build's files can be required by path; its ES build
 * cannot be loaded by node (its imports have no extensions). `test/queue/bullmq-parts.test.ts` checks
 * that these are the classes bullmq's index gives and that the daemon's modules leave the index
 * unloaded, so an upgrade of bullmq that moves a file fails the suite rather than a daemon.
 */
import { createRequire } from 'node:module';

import type * as Bullmq from 'bullmq';

const require = createRequire(import.meta.url);
const classes = (file: string): unknown => require(`bullmq/dist/cjs/classes/${file}`);

/** bullmq's `Queue`. */
export const { Queue } = classes('queue.js') as Pick<typeof Bullmq, 'Queue'>;
/** bullmq's `Queue` type, with bullmq's defaults for its type parameters. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bullmq's own defaults
export type Queue<DataTypeOrJob = any, DefaultResultType = any> = Bullmq.Queue<DataTypeOrJob, DefaultResultType>;

/** bullmq's `Worker`. */
export const { Worker } = classes('worker.js') as Pick<typeof Bullmq, 'Worker'>;
/** bullmq's `Worker` type, with bullmq's defaults for its type parameters. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bullmq's own defaults
export type Worker<DataType = any, ResultType = any> = Bullmq.Worker<DataType, ResultType>;

/** The errors a processor throws to tell bullmq what to do with its job. */
export const { DelayedError, UnrecoverableError, WaitingError } = classes('errors/index.js') as Pick<typeof Bullmq, 'DelayedError' | 'UnrecoverableError' | 'WaitingError'>;
