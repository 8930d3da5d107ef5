import { describe, expect, it } from 'vitest';

import { createLogger } from '../src/log.js';
import { registerSecret } from '../src/secrets.js';

function capture(): { lines: string[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, write: (line: string) => void lines.push(line) };
}

async function flushed(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

describe('createLogger', () => {
  it('writes JSON lines with level labels and child bindings', async () => {
    const out = capture();
    createLogger({ level: 'info', destination: out }).child({ component: 'test' }).info({ n: 1 }, 'hello');
    await flushed();
    const line = JSON.parse(out.lines[0] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', component: 'test', n: 1, msg: 'hello', app: 'storesync' });
  });

  it('never prints a password, a hash or a registered secret, in fields, URLs or messages', async () => {
    registerSecret('very-secret-hash-value');
    const out = capture();
    const logger = createLogger({ level: 'debug', destination: out });
    logger.info({ password: 'pw-123456', nested: { hash: 'h' }, url: '/Api/Sale/?hash=abcdef&x=1' }, 'call');
    logger.error(new Error('request to /Api/Inventory?hash=very-secret-hash-value failed'));
    logger.warn('login as demo with very-secret-hash-value');
    await flushed();
    const text = out.lines.join('');
    expect(text).not.toContain('pw-123456');
    expect(text).not.toContain('abcdef');
    expect(text).not.toContain('very-secret-hash-value');
    expect(text).toContain('hash=[redacted]');
    expect(out.lines).toHaveLength(3);
  });

  it('respects the level', async () => {
    const out = capture();
    const logger = createLogger({ level: 'warn', destination: out });
    logger.info('hidden');
    logger.warn('shown');
    await flushed();
    expect(out.lines).toHaveLength(1);
  });
});
