/**
 * Products: `GET /Api/product` with every filter of the spec. The spec does not show the product record,
 * so each product is returned with all the fields the store sent.
 */
import { z } from 'zod';

import { formatQueryDate } from './dates.js';
import { type Product, productSchema } from './schemas/index.js';
import { type CallOptions, readAs, type StoreApi } from './transport.js';

/** Filters of the product query, named as in the spec (camelCase for the AND/OR filters). */
export interface ProductFilters {
  parentId?: number;
  /** Field to sort by. */
  order?: string;
  /** true ascending, false descending. */
  ascending?: boolean;
  /** Search term. */
  term?: string;
  mode?: string;
  status?: string;
  /** Fields to include. */
  fields?: string;
  /** AND filters, sent as `filtersand`. */
  filtersAnd?: string;
  /** OR filters, sent as `filtersor`. */
  filtersOr?: string;
  /** Sent as YYYY-MM-DD in the store's time zone. */
  creationDateFrom?: Date | string;
  creationDateTo?: Date | string;
}

const ENDPOINT = '/Api/product';
const productListSchema = z.array(productSchema);

/** The product resource of the store client. */
export class ProductsApi {
  readonly #api: StoreApi;

  constructor(api: StoreApi) {
    this.#api = api;
  }

  /** Lists products matching `filters` (the store answers a bare array). */
  async list(filters: ProductFilters = {}, options: CallOptions = {}): Promise<Product[]> {
    const timeZone = this.#api.config.timeZone;
    const body = await this.#api.request(
      {
        method: 'GET',
        endpoint: ENDPOINT,
        query: {
          parentId: filters.parentId,
          order: filters.order,
          ascending: filters.ascending,
          term: filters.term,
          mode: filters.mode,
          status: filters.status,
          fields: filters.fields,
          filtersand: filters.filtersAnd,
          filtersor: filters.filtersOr,
          creationDateFrom: filters.creationDateFrom === undefined ? undefined : formatQueryDate(filters.creationDateFrom, timeZone),
          creationDateTo: filters.creationDateTo === undefined ? undefined : formatQueryDate(filters.creationDateTo, timeZone),
        },
      },
      options,
    );
    return body === null ? [] : readAs(productListSchema, body, 'GET', ENDPOINT);
  }
}
