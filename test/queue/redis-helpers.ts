/**
 * Kept for the queue tests that still import from here; new code imports test/support/redis.ts and src/wait-for.ts.
 */
export { waitFor } from '../../src/wait-for.js';
export { deleteKeys, listKeys } from '../support/redis.js';
