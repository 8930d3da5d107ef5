import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two cores: integration files share Redis/PostgreSQL/MariaDB, each under its own prefix or schema.
    maxWorkers: 4,
    reporters: ['default'],
  },
});
