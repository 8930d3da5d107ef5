// Lint: typescript-eslint recommended, sorted imports, node: protocol for built-ins, and the layering of src/
// (docs/architecture.md): each layer imports only the layers below it, and no module takes part in an import cycle.
import js from '@eslint/js';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

const nodeProtocol = {
  regex: '^(assert|buffer|child_process|crypto|events|fs|http|https|net|os|path|stream|timers|url|util|zlib|readline|worker_threads|dns|tty)(/.*)?$',
  message: 'Use the node: protocol for built-in modules.',
};

// The folders and top-level files of src/ that form layers; the base (config/, log, errors, events, metrics, secrets,
// wait-for, v8-flags, time-zone)
// may be imported from anywhere.
const folders = ['cli', 'ops', 'sync', 'erp', 'store', 'queue', 'simulator'];
const files = ['daemon', 'main'];

/**
 * The `no-restricted-imports` setting for files of one layer: the node: protocol rule plus a ban on every layer in
 * `above` (a later `no-restricted-imports` replaces an earlier one for the same file, so each block repeats the first).
 * Layer names are unique across src/, so a relative path ending in one of them, at any depth, points at that layer.
 */
function layer(name, above) {
  const banned = [];
  const bannedFolders = above.filter((l) => folders.includes(l));
  const bannedFiles = above.filter((l) => files.includes(l));
  if (bannedFolders.length > 0) {
    banned.push({
      regex: `^(\\.{1,2}/)+(${bannedFolders.join('|')})(/|$)`,
      message: `${name} may not import ${bannedFolders.join(', ')} (layers above it or beside it; see docs/architecture.md).`,
    });
  }
  if (bannedFiles.length > 0) {
    banned.push({
      regex: `^(\\.{1,2}/)+(${bannedFiles.join('|')})(\\.js)?$`,
      message: `${name} may not import ${bannedFiles.join(', ')} (see docs/architecture.md).`,
    });
  }
  return ['error', { patterns: [nodeProtocol, ...banned] }];
}

const base = ['src/config/**/*.ts', 'src/log.ts', 'src/errors.ts', 'src/events.ts', 'src/metrics.ts', 'src/secrets.ts', 'src/wait-for.ts', 'src/v8-flags.ts', 'src/time-zone.ts'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test-output/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      'no-restricted-imports': ['error', { patterns: [nodeProtocol] }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  { files: base, rules: { 'no-restricted-imports': layer('the base (config, log, errors, events, metrics, secrets, wait-for, v8-flags, time-zone)', [...folders, ...files]) } },
  { files: ['src/simulator/**/*.ts'], rules: { 'no-restricted-imports': layer('simulator', ['cli', 'ops', 'sync', 'erp', 'store', 'queue', ...files]) } },
  { files: ['src/queue/**/*.ts'], rules: { 'no-restricted-imports': layer('queue', ['cli', 'ops', 'sync', 'erp', 'store', 'simulator', ...files]) } },
  { files: ['src/store/**/*.ts'], rules: { 'no-restricted-imports': layer('store', ['cli', 'ops', 'sync', 'erp', 'queue', 'simulator', ...files]) } },
  { files: ['src/erp/**/*.ts'], rules: { 'no-restricted-imports': layer('erp', ['cli', 'ops', 'sync', 'queue', 'simulator', ...files]) } },
  { files: ['src/sync/**/*.ts'], rules: { 'no-restricted-imports': layer('sync', ['cli', 'ops', 'simulator', ...files]) } },
  { files: ['src/ops/**/*.ts'], rules: { 'no-restricted-imports': layer('ops', ['cli', 'simulator', ...files]) } },
  { files: ['src/daemon.ts'], rules: { 'no-restricted-imports': layer('daemon', ['cli', 'simulator', 'main']) } },
  { files: ['src/cli/**/*.ts'], rules: { 'no-restricted-imports': layer('cli', ['main']) } },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      // Sources import './x.js' for './x.ts' (NodeNext), so the resolver maps the extension back.
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  // No source file over 400 lines (STYLE.md: split by what the parts do). Import cycles in src/ that run through
  // type-only imports, which import-x/no-cycle skips, are caught by test/lint/house.test.ts.
  { files: ['src/**/*.ts', 'bench/**/*.ts'], rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] } },
  {
    files: ['bin/**/*.js', 'deploy/**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly', setTimeout: 'readonly' } },
  },
);
