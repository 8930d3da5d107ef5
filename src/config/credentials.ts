/**
 * The credentials checked before anything runs (`config check`, `run`), every problem at once (exit 78):
 * the store's (`store-credentials.ts`) and the admin token's length. A short token is refused rather than
 * served: the login page allows 10 guesses a minute per address (`ops/login-limit.ts`), which only
 * protects a token too long to guess.
 */
import { ConfigError } from '../errors.js';
import type { Config } from './schema.js';
import { storeCredentialProblems } from './store-credentials.js';

/** The shortest `admin.token` accepted. */
export const ADMIN_TOKEN_MIN_LENGTH = 16;

/** The problem of an `admin.token` set but shorter than `ADMIN_TOKEN_MIN_LENGTH`, naming the key and its variable, never the value. */
export function adminTokenProblems(config: Readonly<Config>): string[] {
  const { length } = config.admin.token;
  if (length === 0 || length >= ADMIN_TOKEN_MIN_LENGTH) return [];
  return [`admin.token: shorter than ${ADMIN_TOKEN_MIN_LENGTH} characters, too easy to guess; use a random one, e.g. \`openssl rand -base64 24\` (env ADMIN_TOKEN)`];
}

/** Throws a ConfigError (exit 78) listing every credential problem; see the module comment. */
export function assertCredentials(config: Readonly<Config>): void {
  const problems = [...storeCredentialProblems(config), ...adminTokenProblems(config)];
  if (problems.length > 0) throw new ConfigError(problems);
}
