/**
 * Kept for test/queue/schedule.test.ts, which still imports from here (its owner rewrote it meanwhile); everything
 * else imports test/support/redis.ts and src/wait-for.ts. Remove once that import moves.
 */
export { deleteKeys } from '../support/redis.js';
