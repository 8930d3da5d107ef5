/** A thin undici wrapper for the simulator tests: raw HTTP, deliberately not the StoreClient. */
import { request } from 'undici';

/** A response: status, headers and the parsed JSON body (or the text when it is not JSON). */
export interface Reply<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

/** Options of one call. */
export interface CallOptions {
  query?: Record<string, string | number | boolean>;
  /** Sent as JSON with Content-Type application/json unless `raw` is given. */
  body?: unknown;
  /** Sent as is, with `headers`. */
  raw?: string;
  headers?: Record<string, string>;
}

/** Calls `method path` on `baseUrl`. */
export async function call<T = unknown>(baseUrl: string, method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
  const url = new URL(path, baseUrl);
  for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, String(value));
  const hasJson = options.body !== undefined;
  const res = await request(url, {
    method: method as 'GET',
    headers: { ...(hasJson ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(hasJson ? { body: JSON.stringify(options.body) } : options.raw !== undefined ? { body: options.raw } : {}),
  });
  const text = await res.body.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the text is the body.
  }
  return { status: res.statusCode, headers: res.headers, body: body as T };
}

/** Logs in with the default credentials and returns a caller that adds the hash to every request. */
export async function session(baseUrl: string, username = 'demo', password = 'demo-password') {
  const auth = await call<{ data: string }>(baseUrl, 'GET', '/Api/Auth/', { query: { username, password } });
  if (auth.status !== 200) throw new Error(`login failed: HTTP ${auth.status}`);
  const hash = auth.body.data;
  return {
    hash,
    call: <T = unknown>(method: string, path: string, options: CallOptions = {}) =>
      call<T>(baseUrl, method, path, { ...options, query: { hash, ...options.query } }),
  };
}
