/**
 * Loads the configuration once at start-up: `config/default.yaml` → the file named by `--config` or
 * `STORESYNC_CONFIG` → environment variables. This is the one module that reads `process.env`
 * (through its `env` argument, which defaults to it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';

import { ConfigError, describeValue, valueAt } from '../errors.js';
import { registerSecret } from '../secrets.js';
import { redisSecrets } from './redis-options.js';
import { type Config, configSchema } from './schema.js';
import { describeUnknownKey, findUnknownKeys, formatPath } from './unknown-keys.js';

/** The config key an environment variable sets, and how its text is read. */
export interface EnvKey {
  path: string;
  type: 'string' | 'int' | 'bool';
}

/** Environment variables and the config keys they set. `NAME_FILE` reads the value from a file. */
export const ENV_KEYS: Readonly<Record<string, EnvKey>> = {
  STORE_BASE_URL: { path: 'store.baseUrl', type: 'string' },
  STORE_USERNAME: { path: 'store.username', type: 'string' },
  STORE_PASSWORD: { path: 'store.password', type: 'string' },
  STORE_SITE_ID: { path: 'store.siteId', type: 'int' },
  STORE_TIME_ZONE: { path: 'store.timeZone', type: 'string' },
  REDIS_URL: { path: 'redis.url', type: 'string' },
  REDIS_PREFIX: { path: 'redis.prefix', type: 'string' },
  LOG_LEVEL: { path: 'log.level', type: 'string' },
  HTTP_HOST: { path: 'http.host', type: 'string' },
  HTTP_PORT: { path: 'http.port', type: 'int' },
  ADMIN_TOKEN: { path: 'admin.token', type: 'string' },
  ADMIN_USERNAME: { path: 'admin.username', type: 'string' },
  ADMIN_PASSWORD: { path: 'admin.password', type: 'string' },
};

/** Where the package lives: the folder holding config/default.yaml, from src/ or dist/src/. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i += 1) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'config', 'default.yaml'))) return dir;
    dir = dirname(dir);
  }
  throw new ConfigError(['config/default.yaml: not found next to the storesync package']);
}

export interface LoadConfigOptions {
  /** Environment to read; defaults to process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** A config file to layer over the defaults (the CLI's --config). */
  configFile?: string;
  /** Values layered last, over the environment (used by tests and the demo). */
  overrides?: Record<string, unknown>;
  /** The defaults file; defaults to the package's config/default.yaml. */
  defaultFile?: string;
  /**
   * Top-level sections the caller does not use (a CLI command that never serves /admin): a value there
   * naming an unset `${NAME}` is left at its default instead of being a problem.
   */
  unusedSections?: readonly string[];
  /** The environment variables read and the keys they set; defaults to `ENV_KEYS`. */
  envKeys?: Readonly<Record<string, EnvKey>>;
}

type Tree = Record<string, unknown>;

function isTree(value: unknown): value is Tree {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Deep merge where arrays and scalars of `over` replace those of `base`. A mapping of another `kind`
 * (a sink or source changing kind) replaces the whole mapping: the keys of the old kind do not belong.
 */
export function mergeDeep(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    const sameKind = isTree(current) && isTree(value) && (value.kind === undefined || value.kind === current.kind);
    out[key] = sameKind ? mergeDeep(current, value) : value;
  }
  return out;
}

function readYaml(file: string, env: LoadConfigOptions['env'], problems: string[], unused: ReadonlySet<string> = new Set()): Tree {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    problems.push(`${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    return {};
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    problems.push(`${file}: not valid YAML (${(error as Error).message.split('\n')[0]})`);
    return {};
  }
  if (doc === null || doc === undefined) return {};
  if (!isTree(doc)) {
    problems.push(`${file}: expected a mapping of options at the top level`);
    return {};
  }
  return substitute(doc, { env: env ?? {}, problems, unused }, '') as Tree;
}

/** A value of an unused section naming an unset variable: its key is left out (the default applies). */
const UNSET = Symbol('unset');

/** Replaces `${NAME}` in string values from the environment; an unset variable is a problem (but in an unused section). */
function substitute(
  value: unknown,
  context: { env: NonNullable<LoadConfigOptions['env']>; problems: string[]; unused: ReadonlySet<string> },
  path: string,
): unknown {
  if (typeof value === 'string') {
    const unusedSection = context.unused.has(path.split(/[.[]/)[0] ?? '');
    let unset = false;
    const text = value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
      const found = context.env[name];
      if (found !== undefined) return found;
      unset = true;
      if (!unusedSection) context.problems.push(`${path}: \${${name}} is used but the environment variable ${name} is not set`);
      return '';
    });
    return unset && unusedSection ? UNSET : text;
  }
  if (Array.isArray(value)) return value.map((item, i) => substitute(item, context, `${path}[${i}]`)).filter((item) => item !== UNSET);
  if (isTree(value)) {
    return Object.fromEntries(
      Object.entries(value)
        .map(([k, v]) => [k, substitute(v, context, path ? `${path}.${k}` : k)])
        .filter(([, v]) => v !== UNSET),
    );
  }
  return value;
}

function setPath(tree: Tree, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = tree;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    node = isTree(next) ? next : (node[key] = {});
  }
  node[keys[keys.length - 1] as string] = value;
}

function fromEnv(env: NonNullable<LoadConfigOptions['env']>, keys: Readonly<Record<string, EnvKey>>, problems: string[]): Tree {
  const tree: Tree = {};
  for (const [name, { path, type }] of Object.entries(keys)) {
    let raw = env[name];
    const fileName = env[`${name}_FILE`];
    if (fileName !== undefined && fileName !== '') {
      try {
        raw = readFileSync(fileName, 'utf8').replace(/\r?\n$/, '');
      } catch (error) {
        problems.push(`${name}_FILE (${path}): cannot read ${fileName} (${(error as NodeJS.ErrnoException).code ?? error})`);
        continue;
      }
    }
    if (raw === undefined || raw === '') continue;
    if (type === 'int') {
      const n = Number(raw);
      if (!Number.isInteger(n)) {
        problems.push(`${name} (${path}): ${describeValue(raw)} is not a whole number`);
        continue;
      }
      setPath(tree, path, n);
    } else if (type === 'bool') {
      setPath(tree, path, /^(1|true|yes|on)$/i.test(raw));
    } else {
      setPath(tree, path, raw);
    }
  }
  return tree;
}


/**
 * One line per problem: the key, the value found and what is expected. `labelOf` may name a key
 * otherwise (`REDIS_URL (redis.url)` for a value an environment variable set).
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], input: unknown, labelOf: (key: string) => string = (key) => key): string[] {
  return issues.map((issue) => {
    const key = formatPath(issue.path);
    const value = valueAt(input, issue.path);
    const shown = /password|token|hash|secret/i.test(key) ? '[redacted]' : describeValue(value);
    const rule = issue.message.replace(/^(Invalid (input|option)|Too (big|small)): /, '');
    return `${key ? labelOf(key) : '(top level)'}: ${shown} — ${/^expected /i.test(rule) ? rule : `expected ${rule}`}`;
  });
}

/**
 * The set environment variable (or its `NAME_FILE`) whose key is `path` or, with `within`, lies under
 * it; undefined when none is set. What a problem line names, as `NAME (path)`.
 */
function variableAt(path: string, env: NonNullable<LoadConfigOptions['env']>, envKeys: Readonly<Record<string, EnvKey>>, within = false): string | undefined {
  for (const [name, key] of Object.entries(envKeys)) {
    if (key.path !== path && !(within && key.path.startsWith(`${path}.`))) continue;
    if ((env[`${name}_FILE`] ?? '') !== '') return `${name}_FILE`;
    if ((env[name] ?? '') !== '') return name;
  }
  return undefined;
}

/** `NAME (path)` when an environment variable set the key at `path` (the file's value was replaced), else `path`. */
function envLabel(path: string, env: NonNullable<LoadConfigOptions['env']>, envKeys: Readonly<Record<string, EnvKey>>, within = false): string {
  const variable = variableAt(path, env, envKeys, within);
  return variable === undefined ? path : `${variable} (${path})`;
}

/** Reads, merges, validates and freezes the configuration. Throws ConfigError listing every problem. */
export function loadConfig(options: LoadConfigOptions = {}): Readonly<Config> {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  const defaultFile = options.defaultFile ?? join(packageRoot(), 'config', 'default.yaml');
  const unused = new Set(options.unusedSections ?? []);
  let tree = readYaml(defaultFile, env, problems, unused);
  const configFile = options.configFile ?? env.STORESYNC_CONFIG;
  if (configFile) tree = mergeDeep(tree, readYaml(resolve(configFile), env, problems, unused));
  const envKeys = options.envKeys ?? ENV_KEYS;
  tree = mergeDeep(tree, fromEnv(env, envKeys, problems));
  if (options.overrides) tree = mergeDeep(tree, options.overrides);

  // Report every problem at once: unreadable files, bad variables, unknown keys and schema violations.
  problems.push(...unknownKeyProblems(tree, env, envKeys));
  const parsed = configSchema.safeParse(tree);
  if (!parsed.success) {
    // Overrides come last: a key they set is theirs, not the environment's.
    const labelOf = (key: string) => (valueAt(options.overrides, key.split('.')) === undefined ? envLabel(key, env, envKeys) : key);
    problems.push(...describeIssues(parsed.error.issues.filter((i) => i.code !== 'unrecognized_keys'), tree, labelOf));
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  const config = parsed.data;
  for (const secret of [config.store.password, config.admin.token, config.admin.password, ...redisSecrets(config.redis)]) registerSecret(secret);
  return deepFreeze(config);
}

/** One line per key the schema does not know; a key set by an environment variable names the variable. */
function unknownKeyProblems(tree: Tree, env: NonNullable<LoadConfigOptions['env']>, envKeys: Readonly<Record<string, EnvKey>>): string[] {
  return findUnknownKeys(configSchema, tree).map((unknown) => {
    const path = formatPath(unknown.path);
    return describeUnknownKey(unknown, envLabel(path, env, envKeys, true));
  });
}

function deepFreeze<T>(value: T): Readonly<T> {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
