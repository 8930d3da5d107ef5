/**
 * A target's state hash as the worker reads it (`state.ts` names its fields): the field prefixes by kind,
 * and the decoding of an HGETALL of it into a `SkuState`, the hot path of every job (issue 27: a job
 * decodes the hash of each of its SKUs, so nothing here builds more than the state itself).
 */
import type { PendingEntry } from './types.js';

/** The state hash's field prefixes, by kind. */
export const STATE_FIELD = { pending: 'p:', applied: 'a:', acked: 'k:', erp: 'e:' } as const;

/** A pending entry as read, with its raw JSON (settle identifies the handled entry by a digest of it). */
export interface PendingRead {
  raw: string;
  entry: PendingEntry;
}

/** Everything the worker needs about one SKU, read atomically. */
export interface SkuState {
  pending: Map<string, PendingRead>;
  applied: Map<string, number>;
  acked: Map<string, unknown>;
  /** The newest value the ERP gave per field (sent or not). */
  erp: Map<string, PendingEntry>;
  /** The SKU's reservation hash as stored (`parseSkuReservations` reads it). */
  reservations: Record<string, string>;
}

/**
 * A SKU's state from its state hash as HGETALL gives it (a record from a command, a flat field, value
 * list from a script) and its Code's reservation hash.
 */
export function skuState(hash: Record<string, string> | readonly string[], reservations: Record<string, string>): SkuState {
  const state: SkuState = { pending: new Map(), applied: new Map(), acked: new Map(), erp: new Map(), reservations };
  // The ERP entries' JSON, parsed once every field is read (below).
  const erp: string[] = [];
  if (isFlat(hash)) {
    for (let i = 0; i + 1 < hash.length; i += 2) readField(state, erp, hash[i] as string, hash[i + 1] as string);
  } else {
    for (const name in hash) readField(state, erp, name, hash[name] as string);
  }
  // A merge writes the same JSON to `p:` and `e:`, and it stays so until the job settles: the entry is
  // parsed once and shared (nothing changes an entry it reads).
  for (let i = 0; i < erp.length; i += 2) {
    const field = erp[i] as string;
    const raw = erp[i + 1] as string;
    const pending = state.pending.get(field);
    state.erp.set(field, pending?.raw === raw ? pending.entry : (JSON.parse(raw) as PendingEntry));
  }
  return state;
}

function isFlat(hash: Record<string, string> | readonly string[]): hash is readonly string[] {
  return Array.isArray(hash);
}

/** Files one field of a state hash into `state`; an ERP entry's field and JSON go to `erp` (parsed by `skuState`). */
function readField(state: SkuState, erp: string[], name: string, value: string): void {
  const field = name.slice(2);
  switch (name.slice(0, 2)) {
    case STATE_FIELD.pending:
      if (value !== '') state.pending.set(field, { raw: value, entry: JSON.parse(value) as PendingEntry });
      break;
    case STATE_FIELD.applied:
      state.applied.set(field, Number(value));
      break;
    case STATE_FIELD.acked:
      state.acked.set(field, JSON.parse(value) as unknown);
      break;
    case STATE_FIELD.erp:
      erp.push(field, value);
      break;
    default:
  }
}

/** HGETALL's flat reply as a Lua script returns it → a record of field → value. */
export function hashOf(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}
