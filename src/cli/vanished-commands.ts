/**
 * `storesync inventory diff --source NAME`: runs a source's snapshot diff now (queues what changed,
 * vanishes what is gone, or holds a mass of it). `storesync inventory vanished --source NAME
 * [--confirm]`: lists the SKUs the mass guard holds for a source and, with `--confirm`, applies the
 * source's `vanished.action` to them.
 */
import type { Command } from 'commander';

import { audit } from '../ops/audit.js';
import { confirmVanished, diffOnce, heldOf } from '../sync/inventory/snapshot/index.js';
import { type CliContext, printResult } from './context.js';
import { withFlowDeps } from './flow-deps.js';

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
    .description('list the SKUs the mass guard holds for a source; --confirm applies its vanished.action to them')
    .requiredOption('--source <name>', 'the inventory source')
    .option('--confirm', "apply the source's vanished.action (zero, unpublish) to the held SKUs")
    .option('--json', 'print the result as JSON')
    .action(async (options: { source: string; confirm?: boolean; json?: boolean }) => {
      await withFlowDeps(ctx, async (deps) => {
        const held = await heldOf(deps, options.source);
        if (!options.confirm) {
          if (options.json) printResult(ctx.io, held, true);
          else ctx.io.stdout.write(`${describeHeld(held)}\n`);
          return;
        }
        const report = await confirmVanished(deps, options.source);
        audit(ctx.logger(), { user: 'cli', action: 'inventory:vanished:confirm', source: options.source, skus: report.confirmed });
        if (options.json) printResult(ctx.io, report, true);
        else ctx.io.stdout.write(`Source ${report.source}: ${held.action} applied to ${report.confirmed} held SKU(s)${report.sample.length > 0 ? `: ${report.sample.join(', ')}` : ''}\n`);
      });
    });
}

function describeHeld(held: Awaited<ReturnType<typeof heldOf>>): string {
  if (held.held === 0) return `Source ${held.source}: the mass guard holds nothing`;
  return [
    `Source ${held.source}: the mass guard holds ${held.held} vanished SKU(s) since ${held.since ?? '?'}; nothing was written for them.`,
    `--confirm applies "${held.action}" to them. First ones: ${held.sample.join(', ')}`,
  ].join('\n');
}
