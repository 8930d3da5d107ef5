/**
 * Child processes of a run (servers, daemons, the simulator): output goes to a log file so a failure
 * can be read afterwards, and the handle knows how to wait for a line, a signal and the exit.
 */
import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/** A started child with its log. */
export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves with the exit code (or the signal name) once the child has ended. */
  readonly exited: Promise<number | string>;
  /** True until the child has ended. */
  alive(): boolean;
  /** Sends a signal (no-op once ended). */
  kill(signal?: NodeJS.Signals): void;
  /** Sends SIGTERM, then SIGKILL after `graceMs`, and waits for the end. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `command` with its stdout and stderr appended to `logFile`. */
export function startChild(
  command: string,
  args: readonly string[],
  logFile: string,
  options: Pick<SpawnOptions, 'env' | 'cwd'> & { onLine?: (line: string) => void; ipc?: boolean } = {},
): Child {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, [...args], {
    env: options.env,
    cwd: options.cwd,
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let ended = false;
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    log.write(chunk);
    if (!options.onLine) return;
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) options.onLine(line);
  });
  child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      ended = true;
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', (error) => {
      ended = true;
      log.write(`spawn failed: ${error.message}\n`);
      resolve('spawn-error');
    });
  });
  void exited.then(() => log.end());
  return {
    process: child,
    pid: child.pid ?? -1,
    logFile,
    exited,
    alive: () => !ended,
    kill(signal = 'SIGTERM') {
      if (!ended) child.kill(signal);
    },
    async stop(graceMs = 5000) {
      if (ended) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves with the first stdout line matching `pattern` (the child must be started with `onLine`). */
export function lineWaiter(): { onLine: (line: string) => void; wait: (pattern: RegExp, timeoutMs: number, child: Child) => Promise<RegExpMatchArray> } {
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  return {
    onLine(line) {
      lines.push(line);
      for (const listener of listeners) listener(line);
    },
    wait(pattern, timeoutMs, child) {
      return new Promise((resolve, reject) => {
        const seen = lines.map((line) => line.match(pattern)).find((m) => m !== null);
        if (seen) return resolve(seen);
        const timer = setTimeout(() => done(new Error(`no line matching ${pattern} within ${timeoutMs} ms (log: ${child.logFile})`)), timeoutMs);
        const listener = (line: string): void => {
          const match = line.match(pattern);
          if (match) done(undefined, match);
        };
        const done = (error?: Error, match?: RegExpMatchArray): void => {
          clearTimeout(timer);
          listeners.delete(listener);
          if (error || !match) reject(error ?? new Error('no match'));
          else resolve(match);
        };
        listeners.add(listener);
        void child.exited.then((code) => done(new Error(`exited (${code}) before printing ${pattern} (log: ${child.logFile})`)));
      });
    },
  };
}
