/**
 * Users: one by id (`GET /Api/User/{id}`), search (`GET /Api/User?term&fields`), creation
 * (`POST /Api/User`) and update (`PUT /Api/User/{id}`). Bodies are validated before sending.
 */
import { z } from 'zod';

import { ValidationError, type ValidationIssue } from '../errors.js';
import { StoreBadResponseError } from './errors.js';
import {
  type User,
  USER_SEARCH_FIELDS,
  type UserCreate,
  userCreateSchema,
  userSchema,
  type UserSearchField,
  type UserUpdate,
  userUpdateSchema,
} from './schemas/index.js';
import { type CallOptions, readAs, type StoreApi } from './transport.js';
import { assertPositiveId, issuesFrom, parseOrThrow } from './validation.js';

/** Parameters of the user search. */
export interface UserSearch {
  /** Search term; may be empty (with `fields: 'None'`, all users). */
  term?: string;
  /** Which field the term is matched against. */
  fields?: UserSearchField;
}

const USER_ENDPOINT = '/Api/User/{id}';
const USERS_ENDPOINT = '/Api/User';
const USER_WRITE_RULE = 'not a writable field of the user (names are case-sensitive)';
const userListSchema = z.array(userSchema);

/** True for an object that is a user itself, not an envelope around users (`{Data: [...]}`). */
function looksLikeUser(body: Record<string, unknown>): boolean {
  return body.Id !== undefined || typeof body.Username === 'string' || typeof body.EMail === 'string';
}

/**
 * The users of a search answer. The spec does not show it: a list is expected, and one user alone is
 * read as a list of one; any other object (an envelope such as `{Data: [...]}`) is a StoreBadResponseError
 * naming its keys, never a list holding one empty "user".
 */
function searchResult(body: unknown): User[] {
  if (body === null) return [];
  if (Array.isArray(body)) return readAs(userListSchema, body, 'GET', USERS_ENDPOINT);
  if (typeof body === 'object' && looksLikeUser(body as Record<string, unknown>)) return [readAs(userSchema, body, 'GET', USERS_ENDPOINT)];
  const shape = typeof body === 'object' ? `an object with keys ${Object.keys(body).slice(0, 5).join(', ') || '(none)'}` : `a ${typeof body}`;
  throw new StoreBadResponseError(`unexpected response shape: a user search answers an array of users, got ${shape}`, {
    endpoint: `GET ${USERS_ENDPOINT}`,
  });
}

/** The users resource of the store client. */
export class UsersApi {
  readonly #api: StoreApi;

  constructor(api: StoreApi) {
    this.#api = api;
  }

  /** One user by id. Throws StoreNotFoundError on 404. */
  async get(id: number, options: CallOptions = {}): Promise<User> {
    assertPositiveId(id, 'user get');
    const body = await this.#api.request({ method: 'GET', endpoint: USER_ENDPOINT, params: { id } }, options);
    return readAs(userSchema, body, 'GET', USER_ENDPOINT);
  }

  /** Users whose `fields` match `term`. */
  async search(search: UserSearch = {}, options: CallOptions = {}): Promise<User[]> {
    if (search.fields !== undefined && !USER_SEARCH_FIELDS.includes(search.fields)) {
      throw new ValidationError(
        [{ field: 'fields', value: search.fields, rule: `one of ${USER_SEARCH_FIELDS.join(', ')}` }],
        'user search',
      );
    }
    const body = await this.#api.request(
      { method: 'GET', endpoint: USERS_ENDPOINT, query: { term: search.term ?? '', fields: search.fields } },
      options,
    );
    return searchResult(body);
  }

  /**
   * Creates a user; Username, FirstName, LastName, EMail and Password are required. Returns the store's
   * answer as sent (not shown by the spec). Not retried once sent: a repeated POST could create twice.
   */
  async create(user: UserCreate, options: CallOptions = {}): Promise<unknown> {
    const body = parseOrThrow(userCreateSchema, user, 'user create', userCreateRecord(user), USER_WRITE_RULE);
    return this.#api.request({ method: 'POST', endpoint: USERS_ENDPOINT, body }, options);
  }

  /**
   * Updates the user `user.Id`; only the fields sent change. `Password` is refused (creation only).
   * Returns the store's answer as sent.
   */
  async update(user: UserUpdate, options: CallOptions = {}): Promise<unknown> {
    const body = parseOrThrow(userUpdateSchema, user, 'user update', userUpdateRecord(user), USER_WRITE_RULE);
    return this.#api.request({ method: 'PUT', endpoint: USER_ENDPOINT, params: { id: body.Id }, body }, options);
  }
}

function userCreateRecord(user: Partial<UserCreate>): string | undefined {
  return typeof user.Username === 'string' && user.Username ? `user ${user.Username}` : undefined;
}

function userUpdateRecord(user: Partial<UserUpdate>): string | undefined {
  return user.Id === undefined ? undefined : `user ${String(user.Id)}`;
}

/** What `create` would refuse in `user` (empty when it may be sent), each issue naming the field, value and rule. */
export function userCreateIssues(user: unknown): ValidationIssue[] {
  const parsed = userCreateSchema.safeParse(user);
  return parsed.success ? [] : issuesFrom(parsed.error, user, userCreateRecord(user as Partial<UserCreate>), USER_WRITE_RULE);
}

/** What `update` would refuse in `user` (empty when it may be sent). */
export function userUpdateIssues(user: unknown): ValidationIssue[] {
  const parsed = userUpdateSchema.safeParse(user);
  return parsed.success ? [] : issuesFrom(parsed.error, user, userUpdateRecord(user as Partial<UserUpdate>), USER_WRITE_RULE);
}
