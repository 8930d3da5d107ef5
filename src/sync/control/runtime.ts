/**
 * What the control flow works with: its own Redis connection and the `control` queue. Opened once per
 * flow and closed with it.
 */
import type { Redis } from 'ioredis';

import type { Config } from '../../config/schema.js';
import { Queue } from '../../queue/bullmq-parts.js';
import { QUEUE_NAMES } from '../../queue/connection.js';
import type { FlowDeps } from '../flow.js';
import type { LifecycleRuntime } from '../lifecycle.js';
import { closeConnection } from '../runtime.js';
import { type ControlJobData, controlJobName } from './job-data.js';

/** The control flow's runtime: its connection and its queue. */
export interface ControlRuntime extends LifecycleRuntime {
  readonly queue: Queue;
}

/** Opens the runtime. */
export function openControlRuntime(deps: FlowDeps): ControlRuntime {
  const { config } = deps;
  const logger = deps.logger.child({ component: 'control' });
  const redis = deps.connect();
  const queue = openControlQueue(redis, config);
  queue.on('error', (error) => logger.debug({ err: error }, 'control queue error'));
  return {
    config,
    logger,
    redis,
    connect: deps.connect,
    queue,
    async close() {
      await queue.close();
      await closeConnection(redis);
    },
  };
}

/** The `control` queue on `redis` (closing it leaves the connection open). */
export function openControlQueue(redis: Redis, config: Pick<Config, 'redis' | 'queue'>): Queue {
  return new Queue(QUEUE_NAMES.control, {
    connection: redis,
    prefix: config.redis.prefix,
    defaultJobOptions: {
      // A resync is an admin decision: when it fails, the admin sees why and retries from the dashboard.
      attempts: 1,
      removeOnComplete: config.queue.removeOnComplete,
      removeOnFail: config.queue.removeOnFail,
    },
  });
}

/** Queues a validated control job under its readable name; resolves with its id. */
export async function addControlJob(queue: Queue, data: ControlJobData): Promise<string> {
  const job = await queue.add(controlJobName(data), data);
  if (job.id === undefined) throw new Error('BullMQ returned a job without an id');
  return job.id;
}
