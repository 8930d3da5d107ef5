import type { Command } from 'commander';

import type { CliContext } from './context.js';

/** Placeholder until this area's commands land. */
export function registerSalesCommands(_program: Command, _ctx: CliContext): void {}
