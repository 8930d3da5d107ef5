/**
 * What every CLI command needs: the configuration (loaded once, from the global --config option) and a
 * logger. Commands receive a `CliContext` and never read process.env themselves.
 *
 * A command prints its result on stdout and nothing on stderr unless something goes wrong: its logger
 * writes warnings and errors only, unless `--verbose` (then `log.level`, at least info) or `--log-level`
 * is given. The daemon (`run`) logs at `log.level`.
 */
import type { Command } from 'commander';

import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createLogger, type Logger } from '../log.js';

/** Output and environment of a CLI run; main.ts fills it from the process, tests from buffers. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown };
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM); long-running commands wait on it. */
  stopSignal: AbortSignal;
  /** This process's id (names its workers in BullMQ: `processedBy` of each job, the dashboard's worker list). */
  pid?: number;
}

/**
 * What part of the configuration a command uses: `daemon` all of it (`run`, `config check`), `command`
 * all but `admin` (no command serves /admin), `sources` only the sources, Redis and logs. A `${NAME}` left
 * unset in a part the command does not use is no problem for it.
 */
export type ConfigScope = 'daemon' | 'command' | 'sources';

const UNUSED_SECTIONS: Readonly<Record<ConfigScope, readonly string[]>> = {
  daemon: [],
  command: ['admin'],
  sources: ['admin', 'store', 'http', 'sales', 'shutdown'],
};

export interface CliContext {
  io: CliIo;
  /** The configuration, loaded at the first call (with that call's scope). */
  config(scope?: ConfigScope): Readonly<Config>;
  /** Logs on stderr: a `command`'s warnings and errors only (see the module comment), the `daemon`'s at `log.level`. */
  logger(kind?: 'command' | 'daemon'): Logger;
}

/** Levels from the most to the least verbose, as pino orders them. */
const LEVELS: ReadonlyArray<Config['log']['level']> = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** The level a CLI logger writes at: `log.level` for the daemon or when asked, else no less severe than warn. */
export function cliLogLevel(configured: Config['log']['level'], options: { kind: 'command' | 'daemon'; verbose: boolean; explicit: boolean }): Config['log']['level'] {
  if (options.kind === 'daemon' || options.explicit) return configured;
  const rank = (level: Config['log']['level']): number => LEVELS.indexOf(level);
  if (options.verbose) return rank(configured) > rank('info') ? 'info' : configured;
  return rank(configured) < rank('warn') ? 'warn' : configured;
}

/** Builds the context lazily so that `--help` works without a valid configuration. */
export function createContext(program: Command, io: CliIo): CliContext {
  let config: Readonly<Config> | undefined;
  let logger: Logger | undefined;
  return {
    io,
    config(scope = 'command') {
      const opts = program.opts<{ config?: string; logLevel?: string }>();
      config ??= loadConfig({
        env: io.env,
        unusedSections: UNUSED_SECTIONS[scope],
        ...(opts.config ? { configFile: opts.config } : {}),
        ...(opts.logLevel ? { overrides: { log: { level: opts.logLevel } } } : {}),
      });
      return config;
    },
    logger(kind = 'command') {
      const opts = program.opts<{ logLevel?: string; verbose?: boolean }>();
      const level = cliLogLevel(this.config().log.level, { kind, verbose: opts.verbose === true, explicit: opts.logLevel !== undefined });
      // Logs go to stderr for CLI commands so that --json output on stdout stays parseable.
      logger ??= createLogger({ level, destination: io.stderr });
      return logger;
    },
  };
}

/** Writes a value as JSON (with --json) or as a readable table of rows. */
export function printResult(io: CliIo, value: unknown, json: boolean): void {
  if (json) {
    io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  const rows = Array.isArray(value) ? value : [value];
  io.stdout.write(`${formatTable(rows as Array<Record<string, unknown>>)}\n`);
}

/** A plain text table of the scalar columns of `rows`. */
export function formatTable(rows: ReadonlyArray<Record<string, unknown>>, columns?: readonly string[]): string {
  if (rows.length === 0) return '(none)';
  const cols: readonly string[] =
    columns ??
    [...new Set(rows.flatMap((row) => Object.keys(row)))].filter((key) =>
      rows.some((row) => row[key] === null || typeof row[key] !== 'object'),
    );
  const cell = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = cols.map((c) => Math.min(40, Math.max(c.length, ...rows.map((r) => cell(r[c]).length))));
  const line = (values: readonly string[]): string =>
    values.map((v, i) => (v.length > (widths[i] ?? 0) ? `${v.slice(0, (widths[i] ?? 1) - 1)}…` : v.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}
