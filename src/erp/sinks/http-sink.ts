/**
 * HTTP sink: POSTs the sale JSON to the ERP with `Idempotency-Key: <site>-<id>`, so the ERP can drop a
 * repeated delivery. 2xx means accepted, 409 means the ERP already has it; both complete the export.
 * The ERP's own reference is read from the response body's `id` or `reference` when it sends one.
 */
import { ErpError } from '../../errors.js';
import { registerSecret } from '../../secrets.js';
import { bodyExcerpt } from '../../store/errors.js';
import type { Sale } from '../../store/schemas/index.js';
import { Agent, requestUrl } from '../../undici-parts.js';
import { defaultErpRef, type ExportResult, type SalesSink } from './types.js';

/** Options of the HTTP sink (`sales.sink` with kind http). */
export interface HttpSinkOptions {
  url: string;
  /** Extra headers such as Authorization; their values are secrets. */
  headers: Readonly<Record<string, string>>;
  timeoutMs: number;
}

const NAME = 'http-sink';

/** Statuses worth trying again: the ERP is busy, restarting or behind a failing proxy. */
function isTemporary(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/** The ERP's reference from a response body, when it names one. */
function referenceFrom(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed === null || typeof parsed !== 'object') return undefined;
    const record = parsed as Record<string, unknown>;
    for (const key of ['id', 'reference', 'Id', 'Reference']) {
      const value = record[key];
      if ((typeof value === 'string' && value !== '') || typeof value === 'number') return String(value);
    }
  } catch {
    // A body that is not JSON carries no reference; the default one is used.
  }
  return undefined;
}

/** Delivers sales over HTTP; see the module comment. */
export class HttpSalesSink implements SalesSink {
  readonly kind = 'http';
  readonly #options: HttpSinkOptions;
  readonly #agent: InstanceType<typeof Agent>;

  constructor(options: HttpSinkOptions) {
    this.#options = options;
    for (const value of Object.values(options.headers)) registerSecret(value);
    this.#agent = new Agent({ connectTimeout: options.timeoutMs });
  }

  async check(): Promise<void> {}

  async export(sale: Sale, siteId: number): Promise<ExportResult> {
    const fallback = defaultErpRef(siteId, sale.Id);
    let status: number;
    let text: string;
    try {
      const response = await requestUrl(this.#options.url, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: {
          ...this.#options.headers,
          'content-type': 'application/json; charset=utf-8',
          'idempotency-key': fallback,
        },
        body: JSON.stringify(sale),
        headersTimeout: this.#options.timeoutMs,
        bodyTimeout: this.#options.timeoutMs,
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      throw new ErpError(NAME, `POST ${this.#endpoint()} failed: ${(error as Error).message}`, { code: 'ERR_ERP_CONNECTION', cause: error });
    }
    if ((status >= 200 && status < 300) || status === 409) {
      return { erpRef: referenceFrom(text) ?? fallback, created: status !== 409 };
    }
    throw new ErpError(NAME, `POST ${this.#endpoint()} answered HTTP ${status}: ${bodyExcerpt(text)}`, {
      code: 'ERR_ERP_HTTP',
      retryable: isTemporary(status),
    });
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /** The URL without query string or credentials, for messages. */
  #endpoint(): string {
    const url = new URL(this.#options.url);
    return `${url.origin}${url.pathname}`;
  }
}
