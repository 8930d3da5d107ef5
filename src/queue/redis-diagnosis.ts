/**
 * Why Redis cannot be reached, in words an operator acts on: "connection refused at 127.0.0.1:6379", or with
 * Sentinel what the sentinels themselves say ("sentinels … answer but name 127.0.0.1:6380 as master, which they
 * see as down"). ioredis's own text misleads there: its "All sentinels are unreachable" is also raised when every
 * sentinel answered but the master they named refused the connection, so the sentinels are asked directly.
 */
import { Redis } from 'ioredis';

import type { RedisConfig } from '../config/redis-options.js';
import { redactText } from '../secrets.js';
import { describeRedis, tlsOptions } from './connection.js';
import { withTimeout } from './with-timeout.js';

/** Socket error codes of a connection that cannot be (or stay) open. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/**
 * ioredis raises these without a code (only a message), so they are told by their text: a command refused
 * while the connection is not open, a closed connection, Sentinel or Cluster finding no master.
 */
const CONNECTION_MESSAGES = [
  /^Stream isn't writeable/,
  /^Connection is closed/,
  /^Reached the max retries per request limit/,
  /^All sentinels are unreachable/,
  /^Failed to refresh slots cache/,
  /^None of startup nodes is available/,
  /^CLUSTERDOWN/,
];

/** Whether `error` (or its cause) says Redis is not reachable, rather than that a command or a job went wrong. */
export function isConnectionError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 3; current = current.cause, depth += 1) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (current.name === 'MaxRetriesPerRequestError' || current.name === 'ClusterAllFailedError') return true;
    if (CONNECTION_MESSAGES.some((pattern) => pattern.test(current.message))) return true;
  }
  return false;
}

/** A connection error in words ("connection refused at 127.0.0.1:6379"); `undefined` for an unknown error. */
export function describeConnectionError(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, address, port, hostname } = error as NodeJS.ErrnoException & { address?: string; port?: number; hostname?: string };
  const at = address === undefined ? '' : ` at ${address}${port === undefined ? '' : `:${port}`}`;
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused${at}`;
    case 'ETIMEDOUT':
      return `no answer${at} (connection timed out)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return hostname === undefined ? 'host not found (DNS)' : `host ${hostname} not found (DNS)`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to${at || ' the host'}`;
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ECONNABORTED':
      return `connection closed by the server${at}`;
    default:
      break;
  }
  if (/^All sentinels are unreachable/.test(error.message)) return 'no master found through the sentinels';
  if (isConnectionError(error)) return 'the connection is not open (reconnecting)';
  return undefined;
}

/** What one sentinel said about the master group. */
type SentinelAnswer = { node: string; master?: { address: string; flags: string[] }; error?: string };

/** The sentinels' view, each asked on a connection of its own that gives up after `timeoutMs`. */
async function askSentinels(redis: RedisConfig, timeoutMs: number): Promise<SentinelAnswer[]> {
  const nodes = redis.sentinels ?? [];
  const tls = tlsOptions(redis.tls);
  return Promise.all(
    nodes.map(async ({ host, port }): Promise<SentinelAnswer> => {
      const node = `${host}:${port}`;
      const client = new Redis({
        host,
        port,
        ...(redis.sentinelPassword === undefined ? {} : { password: redis.sentinelPassword }),
        ...(tls === undefined ? {} : { tls }),
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        connectTimeout: timeoutMs,
      });
      // A refused connection rejects `connect()` with "Connection is closed."; the socket's error says why.
      let socketError: unknown;
      client.on('error', (error: Error) => (socketError ??= error));
      try {
        await withTimeout(client.connect(), timeoutMs, `sentinel ${node}`);
        const reply = (await withTimeout(client.call('SENTINEL', 'MASTER', redis.name ?? ''), timeoutMs, `sentinel ${node}`)) as string[];
        const fields = new Map<string, string>();
        for (let i = 0; i + 1 < reply.length; i += 2) fields.set(String(reply[i]), String(reply[i + 1]));
        return { node, master: { address: `${fields.get('ip') ?? '?'}:${fields.get('port') ?? '?'}`, flags: (fields.get('flags') ?? '').split(',') } };
      } catch (error) {
        const cause = socketError ?? error;
        return { node, error: describeConnectionError(cause) ?? redactText(cause instanceof Error ? cause.message : String(cause)) };
      } finally {
        client.disconnect();
      }
    }),
  );
}

/** The sentinels' answers in words, with `lastError` (the connection's own) when it adds to them. */
function sentinelWords(redis: RedisConfig, answers: readonly SentinelAnswer[], lastError: unknown): string {
  const answered = answers.filter((answer) => answer.master !== undefined || /no such master/i.test(answer.error ?? ''));
  if (answered.length === 0) return `no sentinel answers (${answers.map((answer) => `${answer.node}: ${answer.error ?? 'no answer'}`).join('; ')})`;
  const who = `sentinels ${answered.map((answer) => answer.node).join(',')}`;
  const named = answered.flatMap((answer) => (answer.master ? [answer.master] : []));
  if (named.length === 0) return `no master reachable: ${who} answer but know no master named "${redis.name ?? ''}"`;
  const addresses = [...new Set(named.map((master) => master.address))].join(' or ');
  const down = [...new Set(named.flatMap((master) => master.flags.filter((flag) => ['s_down', 'o_down', 'failover_in_progress'].includes(flag))))];
  const own = describeConnectionError(lastError);
  if (down.length > 0) return `no master reachable: ${who} answer but name ${addresses} as master, which they see as down (${down.join(',')})`;
  return `${who} name ${addresses} as master, but storesync cannot reach it${own ? ` (${own})` : ''}`;
}

/**
 * Says why Redis is unreachable: from the connection's last error for a single server or a Cluster, and from the
 * sentinels' own answers with Sentinel. Never throws, and answers within about `timeoutMs`.
 */
export async function diagnoseRedis(redis: RedisConfig, lastError: unknown, timeoutMs = 1000): Promise<string> {
  const own = describeConnectionError(lastError) ?? (lastError instanceof Error ? redactText(lastError.message) : undefined);
  if (redis.sentinels !== undefined) return sentinelWords(redis, await askSentinels(redis, timeoutMs), lastError);
  if (redis.cluster !== undefined) return `${describeRedis(redis)}: ${own ?? 'connection lost'}`;
  return own ?? `connection to ${describeRedis(redis)} lost`;
}
