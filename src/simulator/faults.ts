/**
 * Fault injection, settable at start and at run time. Faults apply to the store API only, never to
 * `/__control`. Random draws use their own seeded stream so a chaos run is repeatable for a given order
 * of requests.
 */
import { z } from 'zod';

import { Random } from './random.js';

const rate = z.number().min(0).max(1);

/** The fault settings; every field may be changed at run time. */
export const faultSettingsSchema = z.object({
  /** Added to every API response. */
  latencyMs: z.number().int().nonnegative(),
  /** A random extra delay in [0, jitterMs] on top of latencyMs. */
  jitterMs: z.number().int().nonnegative(),
  /** Probability of an injected 500. */
  failRate: rate,
  /** Probability of an injected 429 with `Retry-After: 1`. */
  rate429: rate,
  /** Most API requests per second (a fixed one-second window); 0: unlimited. Excess → 429 with Retry-After. */
  rateLimit: z.number().int().nonnegative(),
  /** Lifetime of an authentication hash, seconds. */
  hashTtlS: z.number().positive(),
  /** Probability that an inventory PUT/POST or a sale PUT answers HTTP 200 `{Success: false}` and applies nothing. */
  successFalseRate: rate,
  /** Sale listing ignores `offset` (an older server): clients must detect the repeated page. */
  ignoreOffset: z.boolean(),
  /** Sale listing ignores `siteId` and answers every site's sales: clients must check each sale's `SiteId`. */
  ignoreSaleSiteFilter: z.boolean(),
  // --- Variance: behaviours the spec allows but does not pin down. `VARIANCE_PROFILE` turns them all on.
  /** Most sales one listing page returns whatever `limit` asks (0: no cap); the spec gives no maximum. */
  saleLimitCap: z.number().int().nonnegative(),
  /**
   * Responses use the loose types a real service may send: numbers and decimals as strings (`"12.50"`,
   * `"12,50"`), booleans as `0`/`1`/`"true"`, `null` for optional fields, `Taxes`/`DepStock` as objects.
   */
  looseTypes: z.boolean(),
  /** Ids of sales whose listing record is malformed (a field of the wrong type), as one bad record in a page. */
  malformedSaleIds: z.array(z.number().int()),
  /** Codes of inventory items whose query record is malformed (a field of the wrong type). */
  malformedItemCodes: z.array(z.string()),
  /** Inventory writes (PUT, POST) of these codes answer HTTP 500: a store that fails on one item only. */
  failingItemCodes: z.array(z.string()),
  /** Sale listings asking for one of these sites (`siteId`) answer HTTP 500: a store that fails on one site only. */
  failingSaleSiteIds: z.array(z.number().int()),
  /** `PUT /Api/Sale/{id}` replaces instead of merging: update fields it did not receive are emptied. */
  replacingSalePut: z.boolean(),
  /** Successful writes (PUT/POST) answer a body that is empty, `OK` or HTML instead of JSON. */
  nonJsonWriteBodies: z.boolean(),
});

/** The fault settings. */
export type FaultSettings = z.infer<typeof faultSettingsSchema>;

/** A partial change of the fault settings (unknown keys are refused). */
export const faultPatchSchema = faultSettingsSchema.partial().strict();

/** Defaults: no faults, hashes live 30 minutes. */
export const DEFAULT_FAULTS: Readonly<FaultSettings> = Object.freeze({
  latencyMs: 0,
  jitterMs: 0,
  failRate: 0,
  rate429: 0,
  rateLimit: 0,
  hashTtlS: 1800,
  successFalseRate: 0,
  ignoreOffset: false,
  ignoreSaleSiteFilter: false,
  saleLimitCap: 0,
  looseTypes: false,
  malformedSaleIds: [],
  malformedItemCodes: [],
  failingItemCodes: [],
  failingSaleSiteIds: [],
  replacingSalePut: false,
  nonJsonWriteBodies: false,
});

/**
 * The variance profile: a store that stays within the spec but behaves unlike the default simulator
 * (`storesync simulator --variance`, or `startSimulator({...VARIANCE_PROFILE})` in a test). Paging is
 * capped at 20; the malformed records are left to each test, which knows its data.
 */
export const VARIANCE_PROFILE: Readonly<Partial<FaultSettings>> = Object.freeze({
  saleLimitCap: 20,
  looseTypes: true,
  replacingSalePut: true,
  nonJsonWriteBodies: true,
});

/** A body a successful write answers under `nonJsonWriteBodies`: empty, `OK` or an HTML page, in turn. */
export interface NonJsonBody {
  contentType: string;
  text: string;
}

const NON_JSON_BODIES: readonly NonJsonBody[] = [
  { contentType: 'text/plain; charset=utf-8', text: '' },
  { contentType: 'text/plain; charset=utf-8', text: 'OK' },
  {
    contentType: 'text/html; charset=utf-8',
    text: '<!DOCTYPE html><html><head><title>Saved</title></head><body><p>The changes were saved.</p></body></html>',
  },
];

/** A fault to answer instead of handling the request. */
export interface InjectedFault {
  status: 429 | 500;
  kind: 'rateLimited' | 'tooManyRequests' | 'serverError';
  retryAfterS?: number;
}

/** The live fault settings and the decisions they lead to. */
export class Faults {
  #settings: FaultSettings;
  readonly #rng: Random;
  #windowStart = 0;
  #windowCount = 0;
  #bodyTurn = 0;

  constructor(initial: Partial<FaultSettings>, seed: number) {
    this.#settings = { ...DEFAULT_FAULTS, ...faultPatchSchema.parse(initial) };
    this.#rng = new Random(seed ^ 0xfa17);
  }

  /** The current settings; `set` replaces the object, so a reference read earlier stays unchanged. */
  get current(): Readonly<FaultSettings> {
    return this.#settings;
  }

  /** Changes some settings; throws a ZodError on an invalid value or unknown key. */
  set(patch: Partial<FaultSettings>): Readonly<FaultSettings> {
    this.#settings = { ...this.#settings, ...faultPatchSchema.parse(patch) };
    return this.#settings;
  }

  /** Replaces all settings. */
  replace(settings: FaultSettings): void {
    this.#settings = { ...settings };
    this.#windowCount = 0;
    this.#bodyTurn = 0;
  }

  /** The delay to add to this response. */
  delayMs(): number {
    const { latencyMs, jitterMs } = this.#settings;
    return latencyMs + (jitterMs > 0 ? Math.floor(this.#rng.next() * (jitterMs + 1)) : 0);
  }

  /** Decides whether this request meets a fault; counts it against the rate limit otherwise. */
  inject(now: number): InjectedFault | undefined {
    const { rateLimit, rate429, failRate } = this.#settings;
    if (rateLimit > 0) {
      if (now - this.#windowStart >= 1000) {
        this.#windowStart = now - (now % 1000);
        this.#windowCount = 0;
      }
      if (this.#windowCount >= rateLimit) {
        return { status: 429, kind: 'rateLimited', retryAfterS: Math.max(1, Math.ceil((this.#windowStart + 1000 - now) / 1000)) };
      }
      this.#windowCount += 1;
    }
    if (rate429 > 0 && this.#rng.next() < rate429) return { status: 429, kind: 'tooManyRequests', retryAfterS: 1 };
    if (failRate > 0 && this.#rng.next() < failRate) return { status: 500, kind: 'serverError' };
    return undefined;
  }

  /**
   * The body that replaces a successful write's JSON answer, or undefined when `nonJsonWriteBodies` is
   * off. The three shapes come in turn (not at random) so a test of N ≥ 3 writes meets each one.
   */
  nonJsonWriteBody(): NonJsonBody | undefined {
    if (!this.#settings.nonJsonWriteBodies) return undefined;
    const body = NON_JSON_BODIES[this.#bodyTurn % NON_JSON_BODIES.length];
    this.#bodyTurn += 1;
    return body;
  }

  /** True when this write should answer `{Success: false}` on HTTP 200. */
  successFalse(): boolean {
    const p = this.#settings.successFalseRate;
    return p > 0 && this.#rng.next() < p;
  }
}
