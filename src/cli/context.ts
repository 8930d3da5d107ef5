/**
 * What every CLI command needs: the configuration (loaded once, from the global --config option) and a
 * logger. Commands receive a `CliContext` and never read process.env themselves.
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

export interface CliContext {
  io: CliIo;
  config(): Readonly<Config>;
  logger(): Logger;
}

/** Builds the context lazily so that `--help` works without a valid configuration. */
export function createContext(program: Command, io: CliIo): CliContext {
  let config: Readonly<Config> | undefined;
  let logger: Logger | undefined;
  return {
    io,
    config() {
      const opts = program.opts<{ config?: string; logLevel?: string }>();
      config ??= loadConfig({
        env: io.env,
        ...(opts.config ? { configFile: opts.config } : {}),
        ...(opts.logLevel ? { overrides: { log: { level: opts.logLevel } } } : {}),
      });
      return config;
    },
    logger() {
      // Logs go to stderr for CLI commands so that --json output on stdout stays parseable.
      logger ??= createLogger({ level: this.config().log.level, destination: io.stderr });
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
