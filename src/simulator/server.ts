/**
 * The request pipeline: control requests go straight to their routes; API requests are counted, delayed,
 * may meet an injected fault, must carry a valid hash (except authentication), then reach their route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

import type { Faults, InjectedFault, NonJsonBody } from './faults.js';
import { HttpError, isObject, parseJsonBody, readText, sendJson, sendText } from './http.js';
import { pathSegments, Query, type Router,type RouteReply } from './router.js';
import { hashValid } from './routes/auth.js';
import type { SimContext } from './routes/context.js';

/** Largest API request body; the spec states no limit, and one item is a few hundred bytes. */
const API_BODY_LIMIT = 10 * 1024 * 1024;
/** Bulk item uploads of the control API carry whole catalogues. */
const CONTROL_BODY_LIMIT = 1024 * 1024 * 1024;

/** What the request handler needs. */
export interface PipelineDeps {
  ctx: SimContext;
  api: Router;
  control: Router;
  /** Aborted on close: pending injected delays end at once. */
  signal: AbortSignal;
}

function faultReply(fault: InjectedFault): RouteReply {
  if (fault.status === 500) return { status: 500, body: { Success: false, Message: 'Internal server error (injected)' } };
  return {
    status: 429,
    body: { Success: false, Message: 'Too many requests' },
    headers: { 'retry-after': String(fault.retryAfterS ?? 1) },
  };
}

function errorReply(error: unknown): RouteReply {
  if (error instanceof HttpError) return { status: error.status, body: error.body, headers: error.headers };
  // A simulator bug: answer 500 with the reason so the failing test shows it.
  return { status: 500, body: { Success: false, Message: `simulator error: ${(error as Error).message}` } };
}

/** One request on its way to a route. */
interface Dispatch {
  match: ReturnType<Router['match']>;
  req: IncomingMessage;
  segments: readonly string[];
  query: Query;
  now: number;
  /** API bodies need a JSON Content-Type and a modest size; control bodies do not. */
  strictBody: boolean;
  /** Refuses a request without a valid hash (undefined: allowed). */
  authorize(query: Query): RouteReply | undefined;
}

async function dispatch({ match, req, segments, query, now, strictBody, authorize }: Dispatch): Promise<RouteReply> {
  const method = req.method ?? 'GET';
  if (!match) return { status: 404, body: { Success: false, Message: `No route for ${method} /${segments.join('/')}` } };
  if ('allowed' in match) {
    return { status: 405, body: { Success: false, Message: `Method ${method} not allowed` }, headers: { allow: match.allowed.join(', ') } };
  }
  if (match.route.auth !== false) {
    const refused = authorize(query);
    if (refused) return refused;
  }
  const limit = strictBody ? API_BODY_LIMIT : CONTROL_BODY_LIMIT;
  const body = async (): Promise<unknown> => {
    const text = await readText(req, limit);
    return strictBody ? parseJsonBody(req.headers['content-type'], text) : parseJsonBody('application/json', text);
  };
  return match.route.handle({ query, params: match.params, body, now });
}

/** Under `nonJsonWriteBodies`, the text that replaces a successful PUT/POST's JSON (a refusal stays JSON). */
function nonJsonWriteBody(faults: Faults, method: string | undefined, reply: RouteReply): NonJsonBody | undefined {
  if (method !== 'PUT' && method !== 'POST') return undefined;
  if (reply.status < 200 || reply.status >= 300) return undefined;
  if (isObject(reply.body) && reply.body.Success === false) return undefined;
  return faults.nonJsonWriteBody();
}

/** The `(req, res)` handler of the simulator's HTTP server. */
export function createHandler(deps: PipelineDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const { ctx, api, control, signal } = deps;
  const { counters, faults } = ctx;

  const authorize = (query: Query): RouteReply | undefined => {
    if (hashValid(ctx, query.get('hash'), ctx.now())) return undefined;
    counters.bump('unauthorized');
    return { status: 401, body: { Success: false, Message: 'Invalid or expired hash' } };
  };

  const handleApi = async (req: IncomingMessage, segments: string[], query: Query): Promise<RouteReply> => {
    const method = req.method ?? 'GET';
    const match = api.match(method, segments);
    counters.request(match && 'route' in match ? `${method} ${match.route.template}` : `${method} (unmatched)`, ctx.now());
    const delay = faults.delayMs();
    if (delay > 0) await sleep(delay, undefined, { signal });
    const fault = faults.inject(ctx.now());
    if (fault) {
      counters.fault(fault.kind);
      return faultReply(fault);
    }
    return dispatch({ match, req, segments, query, now: ctx.now(), strictBody: true, authorize });
  };

  return (req, res) => {
    const url = req.url ?? '/';
    const at = url.indexOf('?');
    const segments = pathSegments(at < 0 ? url : url.slice(0, at));
    const query = new Query(at < 0 ? '' : url.slice(at + 1));
    const isControl = segments[0] === '__control';
    const pending = isControl
      ? dispatch({
          match: control.match(req.method ?? 'GET', segments),
          req,
          segments,
          query,
          now: ctx.now(),
          strictBody: false,
          authorize: () => undefined,
        })
      : handleApi(req, segments, query);
    pending
      .catch((error: unknown) => {
        if (signal.aborted) return undefined;
        return errorReply(error);
      })
      .then((reply) => {
        if (!reply) {
          res.destroy();
          return;
        }
        if (!isControl) counters.response(reply.status, req.method ?? 'GET');
        const plain = isControl ? undefined : nonJsonWriteBody(faults, req.method, reply);
        if (plain) sendText(res, reply.status, plain.contentType, plain.text);
        else sendJson(res, reply.status, reply.body, reply.headers);
      })
      .catch(() => res.destroy());
  };
}
