/** The ConfigError a configuration is refused with: the config tests read its message or its problems. */
import { ConfigError } from '../../src/errors.js';

/** Runs `load` and returns the ConfigError it throws; fails when it throws another error or none. */
export function configErrorOf(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError: the configuration loaded');
}
