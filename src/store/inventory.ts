/**
 * Inventory endpoints: query (`GET /Api/Inventory/Get`, or the plain `/Api/inventory` form), update
 * (`PUT /Api/Inventory?mode=default`, one item, only the fields sent change) and creation (POST to
 * `store.inventoryCreatePath`). Every write is validated first; an invalid item is never sent.
 */
import { z } from 'zod';

import { ValidationError } from '../errors.js';
import { readRecord, type RecordRead, type RecordReadOptions, reportReject } from './records.js';
import {
  type InventoryItem,
  inventoryItemSchema,
  type InventoryUpdateInput,
  type InventoryUpdateResult,
  inventoryUpdateResultSchema,
  isInventoryItemAsSent,
} from './schemas/index.js';
import { type CallOptions, readAs, type StoreApi, type StreamOptions } from './transport.js';
import { validateInventoryUpdate } from './validation.js';

/** Filters of the inventory query. */
export interface InventoryQuery {
  /** One item by its Code; without it, all items. */
  code?: string;
  pricelistId?: number;
  siteId?: number;
  /** Adds preferences and custom settings to each item. */
  includePreferences?: boolean;
}

/** Options of the inventory query (`beforeBody`: see `StreamOptions`). */
export interface InventoryGetOptions extends RecordReadOptions, StreamOptions {
  /** `get`: `/Api/Inventory/Get` (default); `plain`: `/Api/inventory`. The spec documents both. */
  form?: 'get' | 'plain';
}

const ENDPOINTS = { get: '/Api/Inventory/Get', plain: '/Api/inventory' } as const;
const UPDATE_ENDPOINT = '/Api/Inventory';
/** The update's query, frozen: the transport builds its query string once (`searchOf`). */
const UPDATE_QUERY = Object.freeze({ mode: 'default' });

/** Reads one item of a query answer; an item that does not fit is a reject (a streaming reader calls this per element). */
export function parseInventoryRecord(raw: unknown, endpoint = `GET ${ENDPOINTS.get}`): RecordRead<InventoryItem> {
  if (isInventoryItemAsSent(raw)) return { ok: true, record: raw };
  return readRecord(inventoryItemSchema, raw, { resource: 'inventory', key: 'Code', endpoint });
}

// A single item where a list was expected is read as a list of one: older services answered so for `code`.
const rawListSchema = z.union([z.array(z.unknown()), z.looseObject({}).transform((item) => [item])]);

/** The inventory resource of the store client. */
export class InventoryApi {
  readonly #api: StoreApi;

  constructor(api: StoreApi) {
    this.#api = api;
  }

  /**
   * Reads items (all of them, or the one with `code`). Item by item: one that does not fit is handed to
   * `options.onReject` (or logged) and left out.
   */
  async get(query: InventoryQuery = {}, options: InventoryGetOptions = {}): Promise<InventoryItem[]> {
    const items: InventoryItem[] = [];
    await this.each(query, (item) => void items.push(item), options);
    return items;
  }

  /**
   * Reads items like `get` but hands them to `visit` one by one as the body streams in: neither the
   * body's text nor the whole parsed array is ever held, so a caller that keeps only a few fields (the
   * reconcile, over 100,000 items) needs memory for what it keeps only.
   */
  async each(query: InventoryQuery, visit: (item: InventoryItem) => void, options: InventoryGetOptions = {}): Promise<void> {
    const endpoint = ENDPOINTS[options.form ?? 'get'];
    const label = `GET ${endpoint}`;
    // Each element is read as it arrives: one that does not fit is handed to `options.onReject` and left out.
    const readOne = (element: unknown): void => {
      const read = parseInventoryRecord(element, label);
      if (read.ok) visit(read.record);
      else reportReject(this.#api, read.reject, options);
    };
    const body = await this.#api.streamArray(
      {
        method: 'GET',
        endpoint,
        query: {
          code: query.code,
          pricelistId: query.pricelistId,
          siteId: query.siteId,
          includePreferences: query.includePreferences,
        },
      },
      readOne,
      options,
    );
    if (body === null || body === undefined) return;
    for (const element of readAs(rawListSchema, body, 'GET', endpoint)) readOne(element);
  }

  /**
   * Updates one item by Code (`PUT /Api/Inventory?mode=default`); fields left out stay unchanged.
   * Throws ValidationError, without sending anything, when the item breaks a rule of the spec.
   */
  async update(item: InventoryUpdateInput, options: CallOptions = {}): Promise<InventoryUpdateResult> {
    const body = checked(item, 'inventory update');
    const result = await this.#api.request(
      { method: 'PUT', endpoint: UPDATE_ENDPOINT, query: UPDATE_QUERY, body },
      options,
    );
    return writeResult(result);
  }

  /**
   * Creates an item (POST to `store.inventoryCreatePath`, default `/Api/Inventory`). The spec names this
   * operation ("similar to PUT, Code must be unique") but shows neither path nor payload: the path is an
   * assumption made configurable, and the payload is the update's item. Validated like an update.
   */
  async create(item: InventoryUpdateInput, options: CallOptions = {}): Promise<InventoryUpdateResult> {
    const body = checked(item, 'inventory create');
    const endpoint = this.#api.config.inventoryCreatePath;
    const result = await this.#api.request({ method: 'POST', endpoint, body }, options);
    return writeResult(result);
  }
}

/**
 * The result of a write the store took (2xx, not `{Success: false}`): its `{Success, Message}` when it
 * answered that shape, else a plain success (an empty body, `OK`, an HTML page, another JSON value).
 * Never an error: a write the store took must not be retried, and a repeated POST creates twice.
 */
function writeResult(body: unknown): InventoryUpdateResult {
  // The answer as the store writes it (a boolean Success, a text Message or none): what the schema would
  // give, without its work on every PUT (issue 27).
  if (isPlainResult(body)) return body;
  const parsed = inventoryUpdateResultSchema.safeParse(body);
  return parsed.success && typeof body === 'object' && body !== null && !Array.isArray(body) ? parsed.data : { Success: true };
}

/** The body to send: the item with InternalId 0, or a ValidationError naming every broken rule. */
function checked(item: InventoryUpdateInput, context: string): InventoryUpdateInput {
  // The caller's InternalId, if any, is validated rather than overwritten: anything but 0 is a mistake.
  const body: InventoryUpdateInput = { InternalId: 0, ...item };
  const issues = validateInventoryUpdate(body);
  if (issues.length > 0) throw new ValidationError(issues, context);
  return body;
}

/** True for `{Success, Message}` of the types the schema gives (a boolean or none, a text or none), any other fields kept. */
function isPlainResult(body: unknown): body is InventoryUpdateResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { Success, Message } = body as Record<string, unknown>;
  return (Success === undefined || Success === null || typeof Success === 'boolean') && (Message === undefined || Message === null || typeof Message === 'string');
}
