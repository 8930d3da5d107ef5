/**
 * Sales: the list (`GET /Api/Sale/` with every filter, one page), an iterator over all pages, one sale
 * (`GET /Api/Sale/{id}`) and its update (`PUT /Api/Sale/{id}`, sent complete by `change`).
 */
import { z } from 'zod';

import { ValidationError } from '../errors.js';
import { formatQueryDate } from './dates.js';
import { readRecord, type RecordRead, type RecordReadOptions, reportReject } from './records.js';
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
  /** Sales asked for per page (default 100; the spec recommends 50 to 100). The store may answer fewer. */
  pageSize?: number;
  /** Most pages read before paging stops with a warning (default 1000): a guard against endless paging. */
  maxPages?: number;
};

/** Why paging stopped before an empty page. */
export type PagingStopReason = 'repeated-page' | 'max-pages';

/** Paging that a guard stopped: sales after this point may not have been read. */
export interface PagingStop {
  reason: PagingStopReason;
  /** Pages read. */
  pages: number;
  /** Offset of the next page that was not read. */
  offset: number;
}

/** Options of `sales.iterate`. */
export interface SaleIterateOptions extends RecordReadOptions {
  /** Called when a guard stops the paging (also logged as a warning and counted). */
  onPagingStop?: (stop: PagingStop) => void;
}

const LIST_ENDPOINT = '/Api/Sale/';
const SALE_ENDPOINT = '/Api/Sale/{id}';
const DEFAULT_PAGE_SIZE = 100;
const DEFAULT_MAX_PAGES = 1000;
const LIST_LABEL = `GET ${LIST_ENDPOINT}`;
const rawListSchema = z.array(z.unknown());

/** Reads one sale of a listing; a sale that does not fit is a reject (a streaming reader calls this per element). */
export function parseSaleRecord(raw: unknown, endpoint = LIST_LABEL): RecordRead<Sale> {
  return readRecord(saleSchema, raw, { resource: 'sale', key: 'Id', endpoint });
}

function readId(read: RecordRead<Sale>): string | null {
  return read.ok ? String(read.record.Id) : read.reject.id;
}

/** The sales resource of the store client. */
export class SalesApi {
  readonly #api: StoreApi;

  constructor(api: StoreApi) {
    this.#api = api;
  }

  /**
   * One page of sales matching `filters` (the store answers a bare array). Read sale by sale: a sale
   * that does not fit is handed to `options.onReject` (or logged) and left out; the others are returned.
   */
  async list(filters: SaleFilters = {}, options: RecordReadOptions = {}): Promise<Sale[]> {
    const sales: Sale[] = [];
    for (const read of await this.#page(filters, options)) {
      if (read.ok) sales.push(read.record);
      else reportReject(this.#api, read.reject, options);
    }
    return sales;
  }

  /** One listing page, each record read on its own. */
  async #page(filters: SaleFilters, options: CallOptions): Promise<Array<RecordRead<Sale>>> {
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
    if (body === null) return [];
    // Not a list at all is the whole answer's fault, not a record's.
    const raw = readAs(rawListSchema, body, 'GET', LIST_ENDPOINT);
    return raw.map((record) => parseSaleRecord(record));
  }

  /**
   * Every sale matching `filters`, page by page with limit/offset, each sale yielded once (by Id), until
   * the store answers an empty page. A page shorter than `pageSize` is not the end: the spec gives no
   * maximum `limit`, and a store that caps it answers short pages all along. Two guards stop the paging
   * with a warning, the `storesync_store_paging_stopped_total` counter and `onPagingStop`: a page that
   * brings no sale not seen before (a store that ignores `offset`), and more than `maxPages` pages.
   */
  async *iterate(filters: SaleIterateFilters = {}, options: SaleIterateOptions = {}): AsyncGenerator<Sale, void, undefined> {
    const { pageSize = DEFAULT_PAGE_SIZE, maxPages = DEFAULT_MAX_PAGES, ...rest } = filters;
    const issues = [
      ...(Number.isInteger(pageSize) && pageSize > 0 ? [] : [{ field: 'pageSize', value: pageSize, rule: 'positive integer' }]),
      ...(Number.isInteger(maxPages) && maxPages > 0 ? [] : [{ field: 'maxPages', value: maxPages, rule: 'positive integer' }]),
    ];
    if (issues.length > 0) throw new ValidationError(issues, 'sales iterate');
    const seen = new Set<string>();
    let offset = rest.offset ?? 0;
    for (let pages = 0; ; pages++) {
      if (pages >= maxPages) {
        this.#stopPaging({ reason: 'max-pages', pages, offset }, pageSize, options);
        return;
      }
      const reads = await this.#page({ ...rest, limit: pageSize, offset }, options);
      if (reads.length === 0) return;
      // A record without a usable Id cannot be recognised again; it counts as new.
      const fresh = reads.filter((read) => {
        const id = readId(read);
        return id === null || !seen.has(id);
      });
      if (fresh.length === 0) {
        this.#stopPaging({ reason: 'repeated-page', pages: pages + 1, offset }, pageSize, options);
        return;
      }
      for (const read of fresh) {
        const id = readId(read);
        if (id !== null) seen.add(id);
        if (read.ok) yield read.record;
        else reportReject(this.#api, read.reject, options);
      }
      offset += reads.length;
    }
  }

  #stopPaging(stop: PagingStop, pageSize: number, options: SaleIterateOptions): void {
    this.#api.metrics?.storePagingStopped.inc({ resource: 'sale', reason: stop.reason });
    // StoresyncStorePagingStopped fires on this.
    this.#api.logger.error(
      { endpoint: LIST_LABEL, ...stop, pageSize },
      stop.reason === 'repeated-page'
        ? 'the store answered a page of sales already seen (offset ignored?); paging stopped, later sales may be missing'
        : `sales paging stopped after ${stop.pages} pages (the page limit); later sales may be missing`,
    );
    options.onPagingStop?.(stop);
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
