/**
 * Sales: the list (`GET /Api/Sale/` with every filter, one page), an iterator over all pages, one sale
 * (`GET /Api/Sale/{id}`) and its update (`PUT /Api/Sale/{id}`, sent complete by `change`).
 */
import { z } from 'zod';

import { ValidationError } from '../errors.js';
import { formatQueryDate } from './dates.js';
import { completeSaleUpdate, withStatusText } from './sale-update.js';
import { type Sale, saleSchema, type SaleUpdate, saleUpdateSchema } from './schemas/index.js';
import { type CallOptions, readAs, type StoreApi } from './transport.js';
import { assertPositiveId, assertSaleListQuery, issuesFrom } from './validation.js';

/** Filters of `GET /Api/Sale/`; used either by status and dates or by external reference and site. */
export interface SaleFilters {
  /** One or several statuses, sent comma-separated. */
  status?: number | readonly number[];
  /** Sent as YYYY-MM-DD in the store's time zone. */
  from?: Date | string;
  to?: Date | string;
  /** Sent as `external_reference`; use with `siteId`. */
  externalReference?: string;
  subStatus?: number;
  payMethodId?: number;
  siteId?: number;
  /** Most sales in the answer. */
  limit?: number;
  /** Sales skipped. */
  offset?: number;
  /** Customer e-mail, exact match. */
  email?: string;
  /** Sent as `identification_number`, exact match. */
  identificationNumber?: string;
  /** Sent as `last_digits_phone`. */
  lastDigitsPhone?: string;
  /** Sent as `postal_code`. */
  postalCode?: string | number;
  /** Sent as `full_name`; may be partial. */
  fullName?: string;
}

/** Filters of `sales.iterate`: the list's filters, paged by `pageSize` from `offset`. */
export type SaleIterateFilters = Omit<SaleFilters, 'limit'> & {
  /** Sales per page (default 100; the spec recommends 50 to 100). */
  pageSize?: number;
};

const LIST_ENDPOINT = '/Api/Sale/';
const SALE_ENDPOINT = '/Api/Sale/{id}';
const DEFAULT_PAGE_SIZE = 100;
const saleListSchema = z.array(saleSchema);

/** The sales resource of the store client. */
export class SalesApi {
  readonly #api: StoreApi;

  constructor(api: StoreApi) {
    this.#api = api;
  }

  /** One page of sales matching `filters` (the store answers a bare array). */
  async list(filters: SaleFilters = {}, options: CallOptions = {}): Promise<Sale[]> {
    assertSaleListQuery(filters);
    const timeZone = this.#api.config.timeZone;
    const date = (value: Date | string | undefined): string | undefined =>
      value === undefined ? undefined : formatQueryDate(value, timeZone);
    const body = await this.#api.request(
      {
        method: 'GET',
        endpoint: LIST_ENDPOINT,
        query: {
          status: typeof filters.status === 'number' ? [filters.status] : filters.status,
          from: date(filters.from),
          to: date(filters.to),
          external_reference: filters.externalReference,
          subStatus: filters.subStatus,
          payMethodId: filters.payMethodId,
          siteId: filters.siteId,
          limit: filters.limit,
          offset: filters.offset,
          email: filters.email,
          identification_number: filters.identificationNumber,
          last_digits_phone: filters.lastDigitsPhone,
          postal_code: filters.postalCode,
          full_name: filters.fullName,
        },
      },
      options,
    );
    return body === null ? [] : readAs(saleListSchema, body, 'GET', LIST_ENDPOINT);
  }

  /**
   * Every sale matching `filters`, page by page with limit/offset, each sale yielded once (by Id).
   * Stops on a page shorter than `pageSize`, and on a page that brings no new sale: a store that
   * ignores `offset` answers the same page forever, so that is logged as a warning, not looped on.
   */
  async *iterate(filters: SaleIterateFilters = {}, options: CallOptions = {}): AsyncGenerator<Sale, void, undefined> {
    const { pageSize = DEFAULT_PAGE_SIZE, ...rest } = filters;
    if (!Number.isInteger(pageSize) || pageSize <= 0) {
      throw new ValidationError([{ field: 'pageSize', value: pageSize, rule: 'positive integer' }], 'sales iterate');
    }
    const seen = new Set<number>();
    let offset = rest.offset ?? 0;
    for (;;) {
      const page = await this.list({ ...rest, limit: pageSize, offset }, options);
      const fresh = page.filter((sale) => !seen.has(sale.Id));
      if (page.length > 0 && fresh.length === 0) {
        this.#api.logger.warn(
          { endpoint: `GET ${LIST_ENDPOINT}`, offset, pageSize },
          'the store answered a page of sales already seen (offset ignored?); stopping the paging',
        );
        return;
      }
      for (const sale of fresh) {
        seen.add(sale.Id);
        yield sale;
      }
      if (page.length < pageSize) return;
      offset += page.length;
    }
  }

  /** One sale by id; `from`/`to` are passed as the spec lists them. Throws StoreNotFoundError on 404. */
  async get(id: number, range: { from?: Date | string; to?: Date | string } = {}, options: CallOptions = {}): Promise<Sale> {
    assertPositiveId(id, 'sale get');
    const timeZone = this.#api.config.timeZone;
    const body = await this.#api.request(
      {
        method: 'GET',
        endpoint: SALE_ENDPOINT,
        params: { id },
        query: {
          from: range.from === undefined ? undefined : formatQueryDate(range.from, timeZone),
          to: range.to === undefined ? undefined : formatQueryDate(range.to, timeZone),
        },
      },
      options,
    );
    return readAs(saleSchema, body, 'GET', SALE_ENDPOINT);
  }

  /**
   * Sends `payload` as it is (status, status text, operation status, tracking code, observations,
   * message): fields left out may be emptied by a store that replaces instead of merging, so flows use
   * `change`. `Id` is filled from `id`; a Status without StatusText gets its text from
   * `store.statusTexts`; another Id, an unknown field or a status without a text is refused before
   * sending. Returns the store's answer (not shown by the spec; `{Success: false}` throws
   * StoreRejectedError; an empty or non-JSON answer is null).
   */
  async update(id: number, payload: SaleUpdate, options: CallOptions = {}): Promise<unknown> {
    return (await this.#put(id, payload, options)).answer;
  }

  /**
   * Applies `change` to the sale as the spec recommends: reads the sale (unless `current` is given, read
   * just before), and sends the complete update structure, the sale's current values for every field the
   * change leaves alone. Returns what was sent and the store's answer. The change is checked before
   * anything is read.
   */
  async change(
    id: number,
    change: SaleUpdate,
    options: CallOptions & { current?: Sale } = {},
  ): Promise<{ sent: SaleUpdate; answer: unknown }> {
    const { current, ...call } = options;
    // Both checks before the read: a change that cannot be sent costs no request.
    withStatusText(id, checkedUpdate(id, change), this.#api.config.statusTexts);
    const sale = current ?? (await this.get(id, {}, call));
    return this.#put(id, completeSaleUpdate(sale, change), call);
  }

  async #put(id: number, payload: SaleUpdate, options: CallOptions): Promise<{ sent: SaleUpdate; answer: unknown }> {
    const sent = withStatusText(id, checkedUpdate(id, payload), this.#api.config.statusTexts);
    const answer = await this.#api.request({ method: 'PUT', endpoint: SALE_ENDPOINT, params: { id }, body: sent }, options);
    return { sent, answer };
  }
}

/** `{Id: id, ...payload}`, or a ValidationError for an unknown field, a wrong type or another Id. */
function checkedUpdate(id: number, payload: SaleUpdate): SaleUpdate {
  assertPositiveId(id, 'sale update');
  const body = { Id: id, ...payload };
  const record = `sale ${id}`;
  const parsed = saleUpdateSchema.safeParse(body);
  if (!parsed.success) {
    throw new ValidationError(issuesFrom(parsed.error, body, record, 'not a field of the sale update'), 'sale update');
  }
  if (body.Id !== id) {
    throw new ValidationError([{ record, field: 'Id', value: body.Id, rule: `equal to the sale id ${id}` }], 'sale update');
  }
  return body;
}
