import { describe, expect, it } from 'vitest';

import { maskSecrets, redactText, registerSecret } from '../src/secrets.js';

describe('redactText', () => {
  it('removes the hash and password from query strings whatever their value', () => {
    expect(redactText('GET /Api/Sale/?status=1&hash=abc123&from=2026-01-01')).toBe(
      'GET /Api/Sale/?status=1&hash=[redacted]&from=2026-01-01',
    );
    expect(redactText('/Api/Auth/?username=u&password=p%26q')).toBe('/Api/Auth/?username=u&password=[redacted]');
  });

  it('removes secret JSON keys and URL passwords', () => {
    expect(redactText('{"Password":"hunter22","Username":"x"}')).toBe('{"Password":"[redacted]","Username":"x"}');
    expect(redactText('connect postgres://erp:s3cret@db:5432/erp failed')).toBe('connect postgres://erp:[redacted]@db:5432/erp failed');
  });

  it('removes registered secret values and their URL-encoded form anywhere', () => {
    registerSecret('p&ss+word#1');
    expect(redactText('body says p&ss+word#1 and p%26ss%2Bword%231')).toBe('body says [redacted] and [redacted]');
  });
});

describe('maskSecrets', () => {
  it('masks secret keys deeply and leaves other values alone', () => {
    const masked = maskSecrets({
      store: { username: 'u', password: 'p', retry: { attempts: 3 } },
      admin: { token: 't' },
      sources: [{ name: 'a', headers: { Authorization: 'Bearer x' }, url: 'mysql://u:pw@h/db' }],
    });
    expect(masked).toEqual({
      store: { username: 'u', password: '[redacted]', retry: { attempts: 3 } },
      admin: { token: '[redacted]' },
      sources: [{ name: 'a', headers: { Authorization: '[redacted]' }, url: 'mysql://u:[redacted]@h/db' }],
    });
  });

  it('keeps empty secrets visible as empty so an operator sees they are unset', () => {
    expect(maskSecrets({ password: '' })).toEqual({ password: '' });
  });
});

describe('registerSecret with a rotation', () => {
  it('keeps the last few values of a rotating secret and forgets older ones', () => {
    for (let i = 0; i < 10; i += 1) registerSecret(`rotating-hash-${i}`, 'test-rotation');
    expect(redactText('rotating-hash-9 rotating-hash-6')).toBe('[redacted] [redacted]');
    expect(redactText('rotating-hash-0')).toBe('rotating-hash-0');
  });
});
