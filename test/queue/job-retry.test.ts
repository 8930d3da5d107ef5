import { UnrecoverableError } from 'bullmq';
import { describe, expect, it } from 'vitest';

import { willRetry } from '../../src/queue/job-retry.js';

describe('willRetry', () => {
  it('retries while attempts are left, counting the attempt that just failed', () => {
    const error = new Error('ERP down');
    expect(willRetry({ attemptsMade: 0, opts: { attempts: 3 } }, error)).toBe(true);
    expect(willRetry({ attemptsMade: 1, opts: { attempts: 3 } }, error)).toBe(true);
    expect(willRetry({ attemptsMade: 2, opts: { attempts: 3 } }, error)).toBe(false);
  });

  it('never retries an UnrecoverableError, nor a job with the default single attempt', () => {
    expect(willRetry({ attemptsMade: 0, opts: { attempts: 5 } }, new UnrecoverableError('refused'))).toBe(false);
    expect(willRetry({ attemptsMade: 0, opts: {} }, new Error('ERP down'))).toBe(false);
  });
});
