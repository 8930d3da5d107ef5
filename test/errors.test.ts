import { describe, expect, it } from 'vitest';

import { ErpError, StoreSyncError, withContext } from '../src/errors.js';
import { StoreNotFoundError, StoreRateLimitedError } from '../src/store/errors.js';

describe('withContext', () => {
  it('keeps the class and every field of a store error, with the context in front of the message and the original as cause', () => {
    const original = new StoreRateLimitedError('slow down', { endpoint: 'GET /Api/Sales', status: 429 }, 2000);
    const wrapped = withContext(original, 'sale 7: cannot read it from the store');
    expect(wrapped).toBeInstanceOf(StoreRateLimitedError);
    expect(wrapped).toMatchObject({
      name: 'StoreRateLimitedError',
      code: 'ERR_STORE_RATE_LIMITED',
      retryable: true,
      status: 429,
      endpoint: 'GET /Api/Sales',
      retryAfterMs: 2000,
      message: `sale 7: cannot read it from the store: ${original.message}`,
      cause: original,
    });
    expect(wrapped.stack?.split('\n')[0]).toBe(`StoreRateLimitedError: ${wrapped.message}`);
    // The original is untouched.
    expect(original.message).toBe('GET /Api/Sales (HTTP 429): slow down');
  });

  it('keeps an ERP error an ErpError with its source', () => {
    const wrapped = withContext(new ErpError('sql-sink', 'connection refused', { code: 'ERR_ERP_CONNECTION' }), 'sale 1-7');
    expect(wrapped).toBeInstanceOf(ErpError);
    expect(wrapped).toMatchObject({ code: 'ERR_ERP_CONNECTION', source: 'sql-sink', retryable: true, message: 'sale 1-7: sql-sink: connection refused' });
  });

  it('returns other errors unchanged', () => {
    const plain = new TypeError('boom');
    expect(withContext(plain, 'sale 1')).toBe(plain);
    expect(withContext('text', 'sale 1')).toEqual(new Error('text'));
    expect(withContext(new StoreNotFoundError('no sale', { endpoint: 'GET /Api/Sales/{id}', status: 404 }), 'x')).toBeInstanceOf(StoreSyncError);
  });
});
