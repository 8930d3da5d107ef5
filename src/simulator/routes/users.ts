/**
 * Users: by id (`/Api/User/{id}` and `/user/{id}`), search (term + fields), create (required fields,
 * 409 on a duplicate username or e-mail) and update (only the fields sent change).
 */
import { formatLocalIso } from '../clock.js';
import { HttpError, isObject } from '../http.js';
import { fold } from '../people.js';
import type { Route, RouteReply, RouteRequest } from '../router.js';
import type { User } from '../types.js';
import { checkTypes, requireString } from '../validation.js';
import { loosenUser } from '../variance.js';
import type { SimContext } from './context.js';

/** Search fields of the spec → the user text searched; None searches every one of them. */
const SEARCH_FIELDS: Readonly<Record<string, (u: User) => string>> = {
  username: (u) => u.Username,
  firstname: (u) => u.FirstName,
  lastname: (u) => u.LastName,
  idnumber: (u) => u.IdNumber,
  internalcode: (u) => u.InternalCode,
};

/** Fields the service sets itself: accepted in a body, never applied. */
const SERVICE_FIELDS = new Set(['Id', 'Password', 'CreationDate', 'CurrentLoginDate', 'LastLoginDate', 'CurrentLoginIp', 'LastLoginIp']);

function blankUser(id: number, created: string): User {
  return {
    Id: id, Username: '', SiteId: 1, FirstName: '', LastName: '', EMail: '', Access: true, UILang: 'es-AR',
    CurrentLoginDate: null, LastLoginDate: null, CurrentLoginIp: null, LastLoginIp: null, CreationDate: created,
    Address: '', State: '', City: '', Country: '', Town: '', PostalCode: '', Phone: '', Mobile: '', IdNumber: '',
    ProfileId: 1, PriceListId: 1, InternalCode: '', ExternalLoginCode: null, Birthday: null, Preferences: [],
  };
}

const TEMPLATE: Record<string, unknown> = { ...blankUser(0, ''), Password: '' };

function userById(ctx: SimContext, id: number | undefined): User {
  const stored = id === undefined ? undefined : ctx.state.users.get(id);
  if (!stored) throw new HttpError(404, `User not found: ${id}`);
  return stored.user;
}

function search(ctx: SimContext, { query: q }: RouteRequest): RouteReply {
  const term = fold(q.raw('term') ?? '');
  const field = (q.get('fields') ?? 'None').toLowerCase();
  const users = [...ctx.state.users.values()].map((s) => s.user);
  if (field === 'none') {
    if (term === '') return { status: 200, body: users };
    return { status: 200, body: users.filter((u) => Object.values(SEARCH_FIELDS).some((get) => fold(get(u)).includes(term))) };
  }
  if (field === 'pricelist') {
    if (!/^\d+$/.test(term)) throw new HttpError(400, `fields=PriceList needs a numeric term (got ${term})`);
    return { status: 200, body: users.filter((u) => u.PriceListId === Number(term)) };
  }
  const get = SEARCH_FIELDS[field];
  if (!get) throw new HttpError(400, `fields must be one of UserName, FirstName, LastName, IdNumber, InternalCode, PriceList, None (got ${q.get('fields')})`);
  return { status: 200, body: users.filter((u) => fold(get(u)).includes(term)) };
}

/** 409 when another user already has this username or e-mail (compared case-insensitively). */
function checkUnique(ctx: SimContext, candidate: Pick<User, 'Id' | 'Username' | 'EMail'>): void {
  for (const { user } of ctx.state.users.values()) {
    if (user.Id === candidate.Id) continue;
    if (user.Username.toLowerCase() === candidate.Username.toLowerCase()) throw new HttpError(409, `Username already exists: ${candidate.Username}`);
    if (user.EMail.toLowerCase() === candidate.EMail.toLowerCase()) throw new HttpError(409, `E-mail already exists: ${candidate.EMail}`);
  }
}

function applicable(body: Record<string, unknown>): Partial<User> {
  return Object.fromEntries(Object.entries(body).filter(([field]) => !SERVICE_FIELDS.has(field))) as Partial<User>;
}

async function create(ctx: SimContext, req: RouteRequest): Promise<RouteReply> {
  const body = await req.body();
  if (!isObject(body)) throw new HttpError(400, 'the user must be a JSON object');
  checkTypes(body, TEMPLATE, 'user');
  for (const field of ['Username', 'Password', 'FirstName', 'LastName', 'EMail']) requireString(body, field);
  const user: User = { ...blankUser(0, formatLocalIso(req.now, ctx.timeZone)), ...applicable(body) };
  checkUnique(ctx, user);
  user.Id = ctx.state.nextUserId();
  ctx.state.users.set(user.Id, { user, password: body.Password as string });
  return { status: 200, body: user };
}

async function update(ctx: SimContext, req: RouteRequest): Promise<RouteReply> {
  const user = userById(ctx, req.params.id);
  const body = await req.body();
  if (!isObject(body)) throw new HttpError(400, 'the user must be a JSON object');
  if (body.Id !== undefined && body.Id !== user.Id) throw new HttpError(400, `Id ${String(body.Id)} does not match the user ${user.Id} in the path`);
  checkTypes(body, TEMPLATE, 'user');
  for (const field of ['Username', 'FirstName', 'LastName', 'EMail']) if (field in body) requireString(body, field);
  const changes = applicable(body);
  checkUnique(ctx, { ...user, ...changes });
  Object.assign(user, changes);
  return { status: 200, body: user };
}

/** A read's answer as this store sends it: loosely typed when `looseTypes` is on. */
function present(ctx: SimContext, reply: RouteReply): RouteReply {
  if (!ctx.faults.current.looseTypes) return reply;
  return { ...reply, body: Array.isArray(reply.body) ? reply.body.map((user: User) => loosenUser(user)) : loosenUser(reply.body as User) };
}

/** The user routes. */
export function userRoutes(ctx: SimContext): Route[] {
  const byId = (req: RouteRequest): RouteReply => present(ctx, { status: 200, body: userById(ctx, req.params.id) });
  return [
    { method: 'GET', template: '/Api/User', handle: (req) => present(ctx, search(ctx, req)) },
    { method: 'GET', template: '/Api/User/{id}', handle: byId },
    { method: 'GET', template: '/user/{id}', handle: byId },
    { method: 'POST', template: '/Api/User', handle: (req) => create(ctx, req) },
    { method: 'PUT', template: '/Api/User/{id}', handle: (req) => update(ctx, req) },
    { method: 'PUT', template: '/user/{id}', handle: (req) => update(ctx, req) },
  ];
}
