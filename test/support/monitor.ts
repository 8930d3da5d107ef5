/**
 * MONITOR over a plain socket, for tests that count the commands Redis ran (those inside Lua scripts
 * included). ioredis's own `monitor()` may fail on a busy server with "Command queue state error" when
 * the first monitored line arrives in the same read as MONITOR's OK: here every line after the OK is a
 * monitored command, whatever the timing.
 */
import { connect, type Socket } from 'node:net';

/** A running MONITOR: each command as its arguments (the command name first). */
export interface Monitor {
  readonly seen: string[][];
  close(): void;
}

/** The arguments of one monitored line: `+<time> [<db> <client>] "cmd" "arg" …`, with Redis's escapes. */
export function monitoredArgs(line: string): string[] {
  const start = line.indexOf('] ');
  const args: string[] = [];
  let i = start < 0 ? line.length : start + 2;
  while (i < line.length) {
    if (line[i] !== '"') {
      i += 1;
      continue;
    }
    let arg = '';
    i += 1;
    while (i < line.length && line[i] !== '"') {
      if (line[i] === '\\') {
        const next = line[i + 1];
        if (next === 'x') {
          arg += String.fromCharCode(Number.parseInt(line.slice(i + 2, i + 4), 16));
          i += 4;
          continue;
        }
        arg += next === 'n' ? '\n' : next === 'r' ? '\r' : next === 't' ? '\t' : (next ?? '');
        i += 2;
        continue;
      }
      arg += line[i];
      i += 1;
    }
    args.push(arg);
    i += 1;
  }
  return args;
}

/** Starts MONITOR on `port` (127.0.0.1); resolves once the server confirmed it. */
export function startMonitor(port = 6379): Promise<Monitor> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    const seen: string[][] = [];
    let buffer = '';
    let confirmed = false;
    socket.setEncoding('latin1');
    socket.on('error', reject);
    socket.on('connect', () => socket.write('MONITOR\r\n'));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let end = buffer.indexOf('\r\n');
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!confirmed) {
          confirmed = true;
          if (line !== '+OK') reject(new Error(`MONITOR answered ${line}`));
          else resolve({ seen, close: () => socket.destroy() });
        } else if (line.startsWith('+')) seen.push(monitoredArgs(line));
        end = buffer.indexOf('\r\n');
      }
    });
  });
}
