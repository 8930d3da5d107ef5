import { describe, expect, it } from 'vitest';

import { StoreSlots } from '../../../src/sync/inventory/store-slots.js';

describe('store slots', () => {
  it('never lets more than its size run, and hands a freed slot to the most urgent waiter, then the earliest', async () => {
    const slots = new StoreSlots(2);
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const gates = new Map<string, () => void>();
    const task = (name: string, priority: number) =>
      slots.run(priority, async () => {
        order.push(name);
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => gates.set(name, resolve));
        running -= 1;
      });
    const all = [task('a', 3), task('b', 3), task('price-1', 3), task('price-2', 3), task('stock-out', 1), task('increase', 2)];
    await Promise.resolve();
    expect(order).toEqual(['a', 'b']);
    for (const name of ['a', 'b', 'stock-out', 'increase', 'price-1', 'price-2']) {
      await new Promise((resolve) => setImmediate(resolve));
      // Ends `name`'s write, which must be running by now (else the others would wait for it forever).
      const end = gates.get(name);
      if (!end) expect.fail(`"${name}" should hold a slot by now; started so far: ${order.join(', ')}`);
      end();
    }
    await Promise.all(all);
    expect(order).toEqual(['a', 'b', 'stock-out', 'increase', 'price-1', 'price-2']);
    expect(most).toBe(2);
  });

  it('frees the slot of a task that throws', async () => {
    const slots = new StoreSlots(1);
    await expect(slots.run(1, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(1, () => Promise.resolve('next'))).resolves.toBe('next');
  });
});
