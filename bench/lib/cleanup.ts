/**
 * Undo steps for everything a run starts (servers, temp folders, child processes). They run in reverse
 * order, once, whether the run succeeds, fails or is interrupted: the entry points call `run()` from
 * their signal handlers too.
 */
export class Cleanup {
  private readonly steps: Array<{ label: string; fn: () => unknown }> = [];
  private running: Promise<void> | undefined;

  /** Registers an undo step; the latest registered runs first. */
  defer(label: string, fn: () => unknown): void {
    this.steps.push({ label, fn });
  }

  /** Runs every step (a failing step does not stop the others); repeated calls share one run. */
  run(report: (line: string) => void = () => {}): Promise<void> {
    this.running ??= (async () => {
      while (this.steps.length > 0) {
        const step = this.steps.pop();
        if (!step) break;
        try {
          await step.fn();
        } catch (error) {
          report(`cleanup: ${step.label} failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    })();
    return this.running;
  }

  /**
   * Cleans up and exits 130 on SIGINT/SIGTERM (a second signal exits at once). Only the benchmark entry
   * points call this: they are processes of their own, like `src/main.ts`.
   */
  exitOnSignals(report: (line: string) => void): void {
    let interrupted = false;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (interrupted) process.exit(130);
        interrupted = true;
        report(`${signal}: stopping and cleaning up`);
        void this.run(report).then(() => process.exit(130));
      });
    }
  }
}
