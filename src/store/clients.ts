/**
 * Clients: list (`GET /Api/Client/Get`), one by id (`/Api/Client/{id}` or `/Api/Client/Get/{id}`),
 * create, update and delete. The spec shows no client fields, so records pass through as received and
 * bodies are sent as given (only their shape, a JSON object, is checked).
 */
import { z } from 'zod';

import { ValidationError } from '../errors.js';
import { type Client, clientSchema } from './schemas/index.js';
import { type CallOptions, readAs, type StoreApi } from './transport.js';
import { assertPositiveId } from './validation.js';

/** Options of `clients.get`. */
export interface ClientGetOptions extends CallOptions {
  /** `plain`: `/Api/Client/{id}` (default); `get`: `/Api/Client/Get/{id}`. The spec documents both. */
  form?: 'plain' | 'get';
}

const LIST_ENDPOINT = '/Api/Client/Get';
const GET_ENDPOINTS = { plain: '/Api/Client/{id}', get: '/Api/Client/Get/{id}' } as const;
const CLIENT_ENDPOINT = '/Api/Client/{id}';
const CLIENTS_ENDPOINT = '/Api/Client';
const clientListSchema = z.array(clientSchema);

function checkBody(body: unknown, what: string): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ValidationError([{ field: '(body)', value: body, rule: 'a JSON object' }], what);
  }
}

/** The clients resource of the store client. */
export class ClientsApi {
  readonly #api: StoreApi;

  constructor(api: StoreApi) {
    this.#api = api;
  }

  /** All clients. */
  async list(options: CallOptions = {}): Promise<Client[]> {
    const body = await this.#api.request({ method: 'GET', endpoint: LIST_ENDPOINT }, options);
    return body === null ? [] : readAs(clientListSchema, body, 'GET', LIST_ENDPOINT);
  }

  /** One client by id. Throws StoreNotFoundError on 404. */
  async get(id: number, options: ClientGetOptions = {}): Promise<Client> {
    assertPositiveId(id, 'client get');
    const endpoint = GET_ENDPOINTS[options.form ?? 'plain'];
    const body = await this.#api.request({ method: 'GET', endpoint, params: { id } }, options);
    return readAs(clientSchema, body, 'GET', endpoint);
  }

  /** Creates a client from `client` as given; returns the store's answer. Not retried once sent. */
  async create(client: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    checkBody(client, 'client create');
    return this.#api.request({ method: 'POST', endpoint: CLIENTS_ENDPOINT, body: client }, options);
  }

  /** Updates client `id` with `client` as given; returns the store's answer. */
  async update(id: number, client: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    assertPositiveId(id, 'client update');
    checkBody(client, 'client update');
    return this.#api.request({ method: 'PUT', endpoint: CLIENT_ENDPOINT, params: { id }, body: client }, options);
  }

  /** Deletes client `id`; returns the store's answer. */
  async delete(id: number, options: CallOptions = {}): Promise<unknown> {
    assertPositiveId(id, 'client delete');
    return this.#api.request({ method: 'DELETE', endpoint: CLIENT_ENDPOINT, params: { id } }, options);
  }
}
