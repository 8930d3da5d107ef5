/**
 * pino JSON logs with secrets removed twice: known secret keys are redacted structurally, and every
 * serialized line goes through `redactText` so a hash inside a URL or an error message never leaks.
 */
import { Writable } from 'node:stream';

import { type DestinationStream, type Level, type Logger, pino } from 'pino';

import { redactText } from './secrets.js';

export type { Logger } from 'pino';

/** Keys redacted wherever they appear in a log object (two levels deep). */
const REDACT_PATHS = ['password', 'hash', 'token', 'authorization', 'headers.authorization', 'headers.Authorization'].flatMap(
  (key) => [key, `*.${key}`, `*.*.${key}`],
);

/** A destination that scrubs each line before it reaches the real one. */
export function redactingDestination(target: { write(line: string): unknown }): DestinationStream {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      target.write(redactText(chunk.toString()));
      callback();
    },
  }) as unknown as DestinationStream;
}

export interface LoggerOptions {
  level: Level | 'silent';
  /** Where lines go; stdout by default. Tests pass a collector. */
  destination?: { write(line: string): unknown };
}

/** The root logger; components take `logger.child({ component: '…' })`. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: { app: 'storesync' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    redactingDestination(options.destination ?? process.stdout),
  );
}

/** A logger that writes nothing, for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
