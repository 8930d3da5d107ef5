/**
 * `storesync inventory diff --source NAME`: runs a source's snapshot diff now (queues what changed,
 * vanishes what is gone, or holds a mass of it). `storesync inventory vanished --source NAME
 * [--limit N] [--after CODE] [--json] [--confirm | --keep]`: lists every SKU the mass guard holds for a
 * source, in Code order, written as it is read (paged with `--limit`/`--after`); `--confirm` applies the
 * source's `vanished.action` to them, `--keep` records them as vanished and writes nothing.
 */
import { type Command, Option } from 'commander';

import { audit } from '../ops/audit.js';
import type { FlowDeps } from '../sync/flow.js';
import type { ExplainedVanished } from '../sync/inventory/explain.js';
import { type ConfirmReport, confirmVanished, diffOnce, eachHeld, type HeldPageOptions, keepVanished } from '../sync/inventory/snapshot/index.js';
import { type CliContext, printResult } from './context.js';
import { withFlowDeps } from './flow-deps.js';
import { OptionValues } from './option-values.js';

/** Registers `inventory diff` and `inventory vanished` (under the `inventory` command). */
export function registerVanishedCommands(program: Command, ctx: CliContext): void {
  const inventory =
    program.commands.find((command) => command.name() === 'inventory') ??
    program.command('inventory').description('inventory sync: look into what storesync publishes');
  inventory
    .command('diff')
    .description("run a source's snapshot diff now: queue the SKUs whose values changed, vanish those gone")
    .requiredOption('--source <name>', 'the inventory source (it needs a diff)')
    .option('--json', 'print the report as JSON')
    .action(async (options: { source: string; json?: boolean }) => {
      const report = await withFlowDeps(ctx, (deps) => diffOnce(deps, options.source));
      printResult(ctx.io, report, options.json === true);
    });
  inventory
    .command('vanished')
    .description('list the SKUs the mass guard holds for a source (all of them, in Code order); --confirm applies its vanished.action, --keep writes nothing')
    .requiredOption('--source <name>', 'the inventory source')
    .option('--limit <n>', 'list at most N Codes (each with all its held targets); without it, all of them')
    .option('--after <code>', 'list the Codes after this one (the `next` of the previous page)')
    .option('--confirm', "apply the source's vanished.action (zero, unpublish) to the held SKUs")
    .addOption(new Option('--keep', 'record the held SKUs as vanished, kept by a person: nothing is written to the store').conflicts('confirm'))
    .option('--json', 'print the result as JSON (the list: one document, written as it is read)')
    .action(async (options: { source: string; limit?: string; after?: string; confirm?: boolean; keep?: boolean; json?: boolean }) => {
      const values = new OptionValues();
      const limit = values.int('--limit', options.limit, 'positive integer');
      values.check('inventory vanished');
      await withFlowDeps(ctx, async (deps) => {
        if (!options.confirm && !options.keep) {
          await listHeld(ctx, deps, options.source, { ...(limit === undefined ? {} : { limit }), ...(options.after === undefined ? {} : { after: options.after }) }, options.json === true);
          return;
        }
        const report = options.keep ? await keepVanished(deps, options.source) : await confirmVanished(deps, options.source);
        audit(ctx.logger(), { user: 'cli', action: options.keep ? 'inventory:vanished:keep' : 'inventory:vanished:confirm', source: options.source, skus: report.confirmed });
        if (options.json) printResult(ctx.io, report, true);
        else ctx.io.stdout.write(`${describeResolved(report)}\n`);
      });
    });
}

/** Writes the held SKUs of `source` as they are read: one per line, or one JSON document. */
async function listHeld(ctx: CliContext, deps: FlowDeps, source: string, options: HeldPageOptions, json: boolean): Promise<void> {
  const out = ctx.io.stdout;
  let first = true;
  const done = await eachHeld(deps, source, options, {
    head: (head) => {
      if (json) out.write(`{"source":${JSON.stringify(head.source)},"action":${JSON.stringify(head.action)},"held":${head.held},"since":${JSON.stringify(head.since)},"skus":[`);
      else if (head.held > 0) out.write(`Source ${head.source}: the mass guard holds ${head.held} vanished SKU(s) since ${head.since ?? '?'}; nothing was written for them.\n`);
    },
    page: (labels) => {
      if (!json) out.write(`${labels.join('\n')}\n`);
      else out.write(`${first ? '' : ','}\n${labels.map((label) => JSON.stringify(label)).join(',\n')}`);
      first = false;
    },
  });
  if (json) out.write(`${first ? '' : '\n'}],"next":${JSON.stringify(done.next)}}\n`);
  else if (done.held === 0) out.write(`Source ${done.source}: the mass guard holds nothing\n`);
  else {
    if (done.next !== null) out.write(`More: --after ${done.next}\n`);
    out.write(`--confirm applies "${done.action}" to them; --keep records them as vanished and writes nothing to the store.\n`);
  }
}

function describeResolved(report: ConfirmReport): string {
  const sample = report.sample.length > 0 ? `: ${report.sample.join(', ')}` : '';
  if (report.action === 'keep') return `Source ${report.source}: ${report.confirmed} held SKU(s) kept (recorded as vanished; nothing written to the store)${sample}`;
  return `Source ${report.source}: ${report.action} applied to ${report.confirmed} held SKU(s)${sample}`;
}

/** Why a SKU vanished, in words (`inventory explain`): what was written and why, or why nothing was. */
export function describeVanished(entries: readonly ExplainedVanished[]): string[] {
  return entries.map((entry) => {
    const from = `source ${entry.source}`;
    if (entry.reason === 'held') {
      return `${entry.target}: held by the mass guard of ${from} since ${entry.at} (absent from its snapshot, with many others): nothing written yet; \`storesync inventory vanished --source ${entry.source}\` lists them, --confirm applies vanished.action, --keep writes nothing`;
    }
    const why = entry.reason === 'deleted' ? 'named by its deletions query' : 'absent from its snapshot';
    if (entry.action === 'keep') {
      return entry.confirmed
        ? `${entry.target}: kept by an operator at ${entry.at} (${why}, held by the mass guard of ${from}): nothing written, the store keeps its last values`
        : `${entry.target}: vanished from ${from} at ${entry.at} (${why}); vanished.action keep: nothing written, the store keeps its last values`;
    }
    const written = entry.action === 'unpublish' ? 'Stock 0 and Published false' : 'Stock 0';
    return `${entry.target}: ${written} because it vanished from ${from} at ${entry.at} (${why}; vanished.action ${entry.action}${entry.confirmed ? ', confirmed by an operator' : ''})`;
  });
}
