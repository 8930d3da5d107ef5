/**
 * The process entry: the only module that touches `process` (argv, env, signals, exit).
 */
import { runCli } from './cli/program.js';

const controller = new AbortController();
let signals = 0;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    signals += 1;
    // A second signal means "now": exit without waiting for a graceful shutdown.
    if (signals > 1) process.exit(130);
    controller.abort(signal);
  });
}

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stopSignal: controller.signal,
  pid: process.pid,
});
process.exitCode = code;
// Open handles of a finished command must not keep the process alive.
setTimeout(() => process.exit(code), 200).unref();
