import { runCli } from '../../src/cli/program.js';

/** What a CLI run printed and returned. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured output and the given environment (nothing from process.env). */
export async function cli(argv: string[], env: Record<string, string> = {}, stopSignal = new AbortController().signal): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env,
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    stopSignal,
  });
  return { code, stdout, stderr };
}
