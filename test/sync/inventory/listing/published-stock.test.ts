import { describe, expect, it } from 'vitest';

import { appliesTo, planStock, publishedStock, RESERVATION_MOVES_FIELD, RESERVATION_VERSION_FIELD } from '../../../../src/sync/inventory/listing/published-stock.js';
import type { Reservation } from '../../../../src/sync/inventory/listing/reservations.js';
import type { SkuState } from '../../../../src/sync/inventory/state.js';
import type { PendingEntry } from '../../../../src/sync/inventory/types.js';

const T = Date.parse('2025-05-01T12:00:00.000Z');
const open: Reservation = { siteId: 1, saleId: 1, quantity: 2, since: T - 60_000, raw: `2|${T - 60_000}` };
const booked: Reservation = { ...open, saleId: 2, bookedAt: T, seenAt: T + 5000, raw: `2|${T - 60_000}|${T}|${T + 5000}` };

describe('published stock', () => {
  it('counts an open reservation against every figure', () => {
    expect(appliesTo(open, { version: T + 999_999, at: T + 999_999, changedAt: T + 999_999 })).toBe(true);
  });

  it('counts a booked reservation against timestamp figures older than the booking only', () => {
    expect(appliesTo(booked, { version: T - 1, at: T + 60_000, changedAt: T - 1 })).toBe(true);
    expect(appliesTo(booked, { version: T, at: T + 60_000, changedAt: T })).toBe(false);
  });

  it('counts a booked reservation against a figure without a timestamp read before the booking was seen', () => {
    expect(appliesTo(booked, { version: 42, at: T + 9000, observedAt: T + 5000 })).toBe(true);
    expect(appliesTo(booked, { version: 43, at: T + 9000, observedAt: T + 5001 })).toBe(false);
  });

  it('rounds reserved fractions up and never publishes below zero', () => {
    const fraction: Reservation = { ...open, quantity: 0.5 };
    expect(publishedStock(10, { version: 1, at: 1 }, { version: 1, moves: 1, entries: [fraction] }, 0).published).toBe(9);
    expect(publishedStock(3, { version: 1, at: 1 }, { version: 1, moves: 1, entries: [open] }, 2).published).toBe(0);
  });

  it('never sends a figure computed from an older reservation state than the store took', () => {
    const figure: PendingEntry = { value: 10, version: 5, at: 1, source: 'erp' };
    const state = (resVersion: number, acked = 10, moves = 3): SkuState => ({
      pending: new Map(),
      applied: new Map([
        ['Stock', 5],
        [RESERVATION_VERSION_FIELD, 3],
        [RESERVATION_MOVES_FIELD, 3],
      ]),
      acked: new Map([['Stock', acked]]),
      erp: new Map([['Stock', figure]]),
      reservations: { version: String(resVersion), moves: String(moves), '1:1': open.raw },
    });
    expect(planStock(state(2), true, 0).send).toBeUndefined();
    expect(planStock(state(3), false, 0).send).toBeUndefined();
    expect(planStock(state(4), false, 0).send?.entry.value).toBe(8);
    // Equal to what the store acknowledged, and no sale placed or cancelled since (a booking): recorded, not sent.
    const equal = planStock(state(4, 8), false, 0);
    expect(equal.send).toBeUndefined();
    expect(equal.settled.map((s) => s.field)).toEqual(['Stock', RESERVATION_VERSION_FIELD, RESERVATION_MOVES_FIELD]);
    // Equal, but a sale was placed or cancelled since: the store moved its own stock, so it is sent.
    const moved = planStock(state(4, 8, 4), false, 0);
    expect(moved.send?.entry.value).toBe(8);
    expect(moved.onApplied.find((s) => s.field === RESERVATION_MOVES_FIELD)?.read.entry.version).toBe(4);
  });

  it('records without sending a newer ERP figure equal to what the store acknowledged while no sale was placed or cancelled', () => {
    const figure: PendingEntry = { value: 10, version: 6, at: 2, source: 'erp' };
    const state = (moves: number): SkuState => ({
      pending: new Map([['Stock', { raw: JSON.stringify(figure), entry: figure }]]),
      applied: new Map([
        ['Stock', 5],
        [RESERVATION_VERSION_FIELD, 3],
        [RESERVATION_MOVES_FIELD, 2],
      ]),
      acked: new Map([['Stock', 8]]),
      erp: new Map([['Stock', figure]]),
      reservations: { version: '3', moves: String(moves), '1:1': open.raw },
    });
    const equal = planStock(state(2), false, 0);
    expect(equal.send).toBeUndefined();
    expect(equal.settled.map((s) => s.field)).toEqual(['Stock', RESERVATION_VERSION_FIELD, RESERVATION_MOVES_FIELD]);
    // A hash written before the counter existed counts as no move (as before it existed).
    expect(planStock({ ...state(2), applied: new Map([['Stock', 5]]), reservations: { version: '3', '1:1': open.raw } }, false, 0).send).toBeUndefined();
  });
  it('with sites, resends an equal figure only to the site whose own copy a sale placed or cancelled moved', () => {
    // Split 0.5 / 0.3 / 0.2 of ERP 20: site 3's part is 4 whatever site 1 sells (its 2 units stay within its part of 10).
    const sites = [
      { siteId: 1, share: 0.5, safetyStock: 0 },
      { siteId: 2, share: 0.3, safetyStock: 0 },
      { siteId: 3, share: 0.2, safetyStock: 0 },
    ];
    const figure: PendingEntry = { value: 20, version: 5, at: 1, source: 'erp' };
    // The store acknowledged `acked` with the reservation counters at 3 (version) and `movedBefore` (this site's moves).
    const state = (acked: number, movedBefore: number): SkuState => ({
      pending: new Map(),
      applied: new Map([
        ['Stock', 5],
        [RESERVATION_VERSION_FIELD, 3],
        [RESERVATION_MOVES_FIELD, movedBefore],
      ]),
      acked: new Map([['Stock', acked]]),
      erp: new Map([['Stock', figure]]),
      // A sale of 2 on site 1 reserved since: every counter of the Code moved, site 1's alone among the sites.
      reservations: { version: '4', moves: '4', 'moves:1': '1', 'moves:3': '0', '1:1': open.raw },
    });
    const site = (siteId: number) => ({ siteId, sites, mode: 'split' as const });
    // Site 3 still shows the 4 it acknowledged: no sale touched its copy, so 4 is not sent again.
    const untouched = planStock(state(4, 0), false, 0, site(3));
    expect(untouched.computed?.published).toBe(4);
    expect(untouched.send, 'an equal figure for a site no sale moved').toBeUndefined();
    expect(untouched.settled.find((s) => s.field === RESERVATION_MOVES_FIELD)?.read.entry.version).toBe(0);
    // Site 1's copy took the 2 units itself: 8 differs from the 10 it acknowledged, and is sent.
    expect(planStock(state(10, 0), false, 0, site(1)).send?.entry.value).toBe(8);
    // Equal to what site 1 acknowledged, yet its copy moved since (the store's own arithmetic): sent.
    const moved = planStock(state(8, 0), false, 0, site(1));
    expect(moved.send?.entry.value).toBe(8);
    expect(moved.onApplied.find((s) => s.field === RESERVATION_MOVES_FIELD)?.read.entry.version).toBe(1);
    // A hash written before per-site counters: an equal figure is sent once (publishing the same is safe).
    expect(planStock({ ...state(4, 2), reservations: { version: '4', moves: '4', '1:1': open.raw } }, false, 0, site(3)).send?.entry.value).toBe(4);
  });

  it('never sends an ERP figure older than the version the store took, even forced, and drops it from pending', () => {
    // The store took version 7 (a later figure); version 5 comes back (a source re-read from an older cursor).
    const late: PendingEntry = { value: 4, version: 5, at: 3, source: 'erp' };
    const read = { raw: JSON.stringify(late), entry: late };
    const state: SkuState = {
      pending: new Map([['Stock', read]]),
      applied: new Map([
        ['Stock', 7],
        [RESERVATION_VERSION_FIELD, 3],
        [RESERVATION_MOVES_FIELD, 3],
      ]),
      acked: new Map([['Stock', 9]]),
      erp: new Map([['Stock', late]]),
      reservations: { version: '3', moves: '3' },
    };
    for (const force of [false, true]) {
      const plan = planStock(state, force, 0);
      expect(plan.send?.entry, `the figure sent (force: ${force})`).toBeUndefined();
      expect(plan.settled).toEqual([{ mode: 'drop', field: 'Stock', read }]);
      expect(plan.onApplied).toEqual([]);
    }
  });
});
