/**
 * Clients: list, get, create, update, delete. The spec shows no client fields; the record is the invented
 * `Client` type (Name and Email required, Email unique → 409).
 */
import { formatLocalIso } from '../clock.js';
import { HttpError, isObject } from '../http.js';
import type { Route, RouteReply, RouteRequest } from '../router.js';
import type { Client } from '../types.js';
import { checkTypes, requireString } from '../validation.js';
import type { SimContext } from './context.js';

function blankClient(id: number, created: string): Client {
  return {
    Id: id, Name: '', Email: '', IdType: 'DNI', IdNumber: '', Phone: '', Address: '', City: '', State: '',
    PostalCode: '', Country: 'Argentina', TaxCondition: 'Consumidor Final', PriceListId: 1, Active: true, CreationDate: created,
  };
}

const TEMPLATE: Record<string, unknown> = { ...blankClient(0, '') };

function clientById(ctx: SimContext, id: number | undefined): Client {
  const client = id === undefined ? undefined : ctx.state.clients.get(id);
  if (!client) throw new HttpError(404, `Client not found: ${id}`);
  return client;
}

function checkUnique(ctx: SimContext, candidate: Client): void {
  for (const client of ctx.state.clients.values()) {
    if (client.Id !== candidate.Id && client.Email.toLowerCase() === candidate.Email.toLowerCase()) {
      throw new HttpError(409, `E-mail already exists: ${candidate.Email}`);
    }
  }
}

async function readClient(req: RouteRequest): Promise<Record<string, unknown>> {
  const body = await req.body();
  if (!isObject(body)) throw new HttpError(400, 'the client must be a JSON object');
  checkTypes(body, TEMPLATE, 'client');
  const { Id: _id, CreationDate: _created, ...fields } = body;
  return fields;
}

async function create(ctx: SimContext, req: RouteRequest): Promise<RouteReply> {
  const fields = await readClient(req);
  requireString(fields, 'Name');
  requireString(fields, 'Email');
  const client: Client = { ...blankClient(0, formatLocalIso(req.now, ctx.timeZone)), ...fields };
  checkUnique(ctx, client);
  client.Id = ctx.state.nextClientId();
  ctx.state.clients.set(client.Id, client);
  return { status: 200, body: client };
}

async function update(ctx: SimContext, req: RouteRequest): Promise<RouteReply> {
  const client = clientById(ctx, req.params.id);
  const fields = await readClient(req);
  for (const field of ['Name', 'Email']) if (field in fields) requireString(fields, field);
  checkUnique(ctx, { ...client, ...fields });
  Object.assign(client, fields);
  return { status: 200, body: client };
}

/** The client routes (`/Api/Client/Get` is registered before `/Api/Client/{id}`). */
export function clientRoutes(ctx: SimContext): Route[] {
  const byId = (req: RouteRequest): RouteReply => ({ status: 200, body: clientById(ctx, req.params.id) });
  return [
    { method: 'GET', template: '/Api/Client/Get', handle: () => ({ status: 200, body: [...ctx.state.clients.values()] }) },
    { method: 'GET', template: '/Api/Client/Get/{id}', handle: byId },
    { method: 'GET', template: '/Api/Client/{id}', handle: byId },
    { method: 'POST', template: '/Api/Client', handle: (req) => create(ctx, req) },
    { method: 'PUT', template: '/Api/Client/{id}', handle: (req) => update(ctx, req) },
    {
      method: 'DELETE',
      template: '/Api/Client/{id}',
      handle: (req) => {
        const client = clientById(ctx, req.params.id);
        ctx.state.clients.delete(client.Id);
        return { status: 200, body: { Success: true, Message: `Client ${client.Id} deleted` } };
      },
    },
  ];
}
