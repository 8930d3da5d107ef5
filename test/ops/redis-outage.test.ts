/**
 * src/ops/redis-outage.ts on its own, with the real error of a refused connection: what the flows hand it during an
 * outage (`absorb`), and what its interval lines count. Without a health connection to ask, the first connection
 * error starts the outage. The daemon's whole outage, against a Redis server killed and started again, is
 * test/ops/redis-up.test.ts.
 */
import { connect } from 'node:net';

import { describe, expect, it, onTestFinished } from 'vitest';

import { RedisOutage } from '../../src/ops/redis-outage.js';
import { describeConnectionError } from '../../src/queue/redis-diagnosis.js';
import { sparePort } from '../../src/queue/redis-server.js';
import { waitFor } from '../../src/wait-for.js';
import { logCollector } from './helpers.js';

/** The socket error of a connection to a closed port: ECONNREFUSED, with its address. */
async function refusal(): Promise<Error> {
  const port = await sparePort();
  return new Promise((resolve) => connect(port, '127.0.0.1').once('error', resolve));
}

/** An outage that writes a line every 100 ms, with its logger's lines. */
function outage(): { outage: RedisOutage; interval(): Array<Record<string, unknown>> } {
  const logs = logCollector('debug');
  const tracked = new RedisOutage({ logger: logs.logger, diagnose: async (error) => describeConnectionError(error) ?? 'connection lost', intervalMs: 100, settleMs: 0 });
  onTestFinished(() => tracked.close());
  return { outage: tracked, interval: () => logs.lines().filter((line) => String(line.msg).startsWith('Redis still unreachable')) };
}

describe('RedisOutage', () => {
  it('counts in each interval line the errors since the line before, not since the outage began', async () => {
    const { outage: tracked, interval } = outage();
    const refused = await refusal();
    for (let i = 0; i < 3; i += 1) expect(tracked.absorb('inventory', refused)).toBe(true);
    tracked.absorb('fulfillment', refused);
    await waitFor(() => interval().length >= 2, { message: 'two interval lines' });
    const [first, second] = interval();
    expect(first!.suppressed, 'the first line: every error of the outage so far').toEqual({ inventory: 3, fulfillment: 1 });
    expect(first!.msg).toMatch(/; 4 errors suppressed \(inventory 3, fulfillment 1\) since the last line$/);
    expect(second!.suppressed, 'the second line: no error came after the first').toEqual({});
    expect(second!.msg).toMatch(/; no errors suppressed since the last line$/);
  });

  it('leaves an error that is not a connection error to its flow, during an outage too, and does not count it', async () => {
    const { outage: tracked, interval } = outage();
    const refused = await refusal();
    const storeError = new Error('store answered 503');
    expect(tracked.absorb('inventory', storeError), 'before the outage').toBe(false);
    expect(tracked.absorb('inventory', refused)).toBe(true);
    expect(tracked.absorb('inventory', storeError), 'during the outage').toBe(false);
    expect(tracked.absorb('sales', new Error('ERP export failed: ECONNREFUSED'))).toBe(false);
    await waitFor(() => interval().length >= 1, { message: 'the first interval line' });
    expect(interval()[0]!.suppressed).toEqual({ inventory: 1 });
  });
});
