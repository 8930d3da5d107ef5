/**
 * The process entry: the only module that touches `process` (argv, env, signals, exit).
 */
import { applyMemoryFlags } from './v8-flags.js';

// Before the modules load; a setting of the same kind given to node (command line or NODE_OPTIONS) wins.
applyMemoryFlags(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);

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

// Imported once V8's flags are set: loading the modules is the first burst of allocation.
const { runCli } = await import('./cli/program.js');
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
