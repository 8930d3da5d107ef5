import type { Command } from 'commander';

import type { CliContext } from './context.js';

/** Placeholder until this area's commands land. */
export function registerStoreCommands(_program: Command, _ctx: CliContext): void {}
