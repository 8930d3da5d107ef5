/** What every route module needs from the running simulator. */
import type { TypedEmitter } from '../../events.js';
import type { Counters } from '../counters.js';
import type { Faults } from '../faults.js';
import type { RouteReply } from '../router.js';
import type { InventoryWrite, SaleUpdateEntry, SimulatorState } from '../state.js';

/** Events of the simulator: tests and benchmarks wait on them instead of polling. */
export type SimulatorEvents = {
  /** An inventory write was accepted and applied. */
  'inventory:write': InventoryWrite;
  /** A sale update was accepted and applied. */
  'sale:update': SaleUpdateEntry;
  /** A hash was issued. */
  login: { username: string };
};

/** The running simulator as routes see it. */
export interface SimContext {
  state: SimulatorState;
  faults: Faults;
  counters: Counters;
  events: TypedEmitter<SimulatorEvents>;
  timeZone: string;
  credentials: { username: string; password: string };
  /** The site id the authentication answer carries. */
  site: number;
  now(): number;
}

/** A `{Success: false}` answer on HTTP 200 when that fault fires; the caller then applies nothing. */
export function successFalse(ctx: SimContext): RouteReply | undefined {
  if (!ctx.faults.successFalse()) return undefined;
  ctx.counters.fault('successFalse');
  return { status: 200, body: { Success: false, Message: 'The operation could not be completed (injected)' } };
}
