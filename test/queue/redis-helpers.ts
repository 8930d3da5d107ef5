/**
 * Re-exports for test files that still import from here (some are written on other branches at the same time);
 * new code imports test/support/redis.ts and src/wait-for.ts directly.
 */
export { waitFor } from '../../src/wait-for.js';
export { deleteKeys, listKeys } from '../support/redis.js';
