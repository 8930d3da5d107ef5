/**
 * The `storesync` command line: one program, a subcommand per area, each registered from its own file.
 * Commander splits the command line; every option value is read by `OptionValues` (option-values.ts).
 * Exit codes (`EXIT`, documented in the README's CLI section): 0 ok, 1 store or remote error, 2 usage
 * (unknown command or option, missing argument or required option), 3 a bad option value or input
 * (nothing sent), 78 configuration.
 */
import { Command, CommanderError, Option } from 'commander';

import { ConfigError, StoreSyncError, ValidationError } from '../errors.js';
import { redactText } from '../secrets.js';
import { startedUp } from '../v8-flags.js';
import { registerConfigCommands } from './config-command.js';
import { type CliContext, type CliIo, createContext } from './context.js';
import { registerInventoryCommands } from './inventory-commands.js';
import { OptionValues } from './option-values.js';
import { registerRunCommands } from './run-commands.js';
import { registerSalesCommands } from './sales-commands.js';
import { registerSimulatorCommand } from './simulator-command.js';
import { registerSourcesCommands } from './sources-command.js';
import { registerStoreCommands } from './store-commands.js';
import { registerVanishedCommands } from './vanished-commands.js';

export const EXIT = { ok: 0, remote: 1, usage: 2, validation: 3, config: 78 } as const;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Builds the program; exposed for tests that inspect the command tree. */
export function buildProgram(io: CliIo): { program: Command; ctx: CliContext } {
  const program = new Command('storesync')
    .description('Keeps an online store and an ERP in sync.')
    .addOption(new Option('-c, --config <file>', 'config file layered over config/default.yaml (env: STORESYNC_CONFIG)'))
    .addOption(new Option('--log-level <level>', `override log.level: ${LOG_LEVELS.join(', ')}`))
    .addOption(new Option('-v, --verbose', 'log what the command does on stderr (by default a command writes only its result, and problems)'))
    .hook('preAction', (_program, action) => {
      // Global options are read before any command runs, the same way as the commands' own.
      const values = new OptionValues();
      values.oneOf('--log-level', program.opts<{ logLevel?: string }>().logLevel, LOG_LEVELS);
      values.check('global options');
      // The daemon ends its start-up once started (daemon.ts); any other command's work starts now.
      if (action.name() !== 'run') startedUp();
    })
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  const ctx = createContext(program, io);
  registerRunCommands(program, ctx);
  registerStoreCommands(program, ctx);
  registerInventoryCommands(program, ctx);
  registerVanishedCommands(program, ctx);
  registerSalesCommands(program, ctx);
  registerSimulatorCommand(program, ctx);
  registerSourcesCommands(program, ctx);
  registerConfigCommands(program, ctx);
  // Every subcommand reports usage errors the same way as the root.
  const configure = (command: Command): void => {
    command.exitOverride().showHelpAfterError();
    command.commands.forEach(configure);
  };
  program.commands.forEach(configure);
  return { program, ctx };
}

/** Maps an error to the documented exit code and one clear message. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    return ['commander.helpDisplayed', 'commander.help', 'commander.version'].includes(error.code) ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof ConfigError) return EXIT.config;
  if (error instanceof ValidationError) return EXIT.validation;
  return EXIT.remote;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const { program } = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    const code = exitCodeFor(error);
    if (error instanceof CommanderError) return code;
    if (error instanceof ConfigError) {
      io.stderr.write(`storesync: invalid configuration\n${error.problems.map((p) => `  ${p}`).join('\n')}\n`);
    } else if (error instanceof ValidationError) {
      io.stderr.write(`storesync: ${error.readOnly ? '' : 'nothing sent: '}${error.message}\n`);
    } else if (error instanceof StoreSyncError) {
      io.stderr.write(`storesync: ${error.code}: ${error.message}\n`);
    } else {
      io.stderr.write(`storesync: ${redactText(error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`);
    }
    return code;
  }
}
