/**
 * A small case-insensitive router: paths match whatever their letter case and with or without a trailing
 * slash, as the spec writes them both ways (`/Api/Sale/` and `/api/sale`). Path parameters are integers.
 */
import { parseQueryDate } from './clock.js';
import { HttpError } from './http.js';

/** Query parameters by lower-case name (ASP.NET binds names case-insensitively); repeated names keep all values. */
export class Query {
  readonly #values = new Map<string, string[]>();

  constructor(search: string) {
    for (const [key, value] of new URLSearchParams(search)) {
      const name = key.toLowerCase();
      const list = this.#values.get(name);
      if (list) list.push(value);
      else this.#values.set(name, [value]);
    }
  }

  /** The first value of `name`, or undefined when absent or empty. */
  get(name: string): string | undefined {
    const value = this.#values.get(name.toLowerCase())?.[0];
    return value === undefined || value === '' ? undefined : value;
  }

  /** The first value of `name` even when empty (`term=` means "search everything"). */
  raw(name: string): string | undefined {
    return this.#values.get(name.toLowerCase())?.[0];
  }

  /** Every value of `name`, comma lists split, blanks dropped. */
  list(name: string): string[] {
    return (this.#values.get(name.toLowerCase()) ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  }

  /** An integer parameter; 400 when present but not an integer. */
  int(name: string): number | undefined {
    const value = this.get(name);
    if (value === undefined) return undefined;
    if (!/^-?\d+$/.test(value)) throw new HttpError(400, `query parameter ${name} must be an integer (got ${value})`);
    return Number(value);
  }

  /** A `YYYY-MM-DD` parameter as the start of that day in `timeZone`; 400 when present but malformed. */
  date(name: string, timeZone: string): number | undefined {
    const text = this.get(name);
    if (text === undefined) return undefined;
    const ms = parseQueryDate(text, timeZone);
    if (ms === undefined) throw new HttpError(400, `query parameter ${name} must be a date YYYY-MM-DD (got ${text})`);
    return ms;
  }

  /** A boolean parameter (`true`/`false`/`1`/`0`); 400 when present but not a boolean. */
  bool(name: string): boolean | undefined {
    const value = this.get(name)?.toLowerCase();
    if (value === undefined) return undefined;
    if (value === 'true' || value === '1') return true;
    if (value === 'false' || value === '0') return false;
    throw new HttpError(400, `query parameter ${name} must be true or false (got ${value})`);
  }
}

/** What a route handler gets. */
export interface RouteRequest {
  query: Query;
  params: Record<string, number>;
  /** The parsed JSON body (415/400 when missing or invalid). */
  body(): Promise<unknown>;
  /** Request time, epoch ms. */
  now: number;
}

/** What a route handler answers. */
export interface RouteReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A route: method, template as the spec writes it, handler. */
export interface Route {
  method: string;
  template: string;
  /** False for the authentication endpoint; every other API route needs a valid hash. */
  auth?: boolean;
  handle(req: RouteRequest): Promise<RouteReply> | RouteReply;
}

/** A matched route with its integer parameters. */
export interface RouteMatch {
  route: Route;
  params: Record<string, number>;
}

interface Compiled {
  route: Route;
  segments: string[];
}

/** Lower-case segments without empty ones: `/Api/Sale/` → `['api', 'sale']`. */
export function pathSegments(path: string): string[] {
  return path.toLowerCase().split('/').filter(Boolean);
}

/** Routes matched in registration order, so static segments registered first win over `{id}`. */
export class Router {
  readonly #routes: Compiled[] = [];

  constructor(routes: readonly Route[]) {
    for (const route of routes) this.#routes.push({ route, segments: pathSegments(route.template) });
  }

  /** The route for `method` and path segments; `allowed` lists methods of the path when only those differ. */
  match(method: string, segments: readonly string[]): RouteMatch | { allowed: string[] } | undefined {
    const allowed: string[] = [];
    for (const c of this.#routes) {
      const params = matchSegments(c.segments, segments);
      if (!params) continue;
      if (c.route.method === method) return { route: c.route, params };
      allowed.push(c.route.method);
    }
    return allowed.length > 0 ? { allowed } : undefined;
  }
}

function matchSegments(template: readonly string[], path: readonly string[]): Record<string, number> | undefined {
  if (template.length !== path.length) return undefined;
  const params: Record<string, number> = {};
  for (let i = 0; i < template.length; i += 1) {
    const t = template[i] as string;
    const p = path[i] as string;
    if (t.startsWith('{')) {
      if (!/^\d+$/.test(p)) return undefined;
      params[t.slice(1, -1)] = Number(p);
    } else if (t !== p) {
      return undefined;
    }
  }
  return params;
}
