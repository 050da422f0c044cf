// Lint: typescript-eslint's recommended rules (type-checking itself is `tsc --noEmit`), and the import
// boundaries of docs/architecture.md: api/ imports nothing of ours, lib/ only lib/ and api/, and the
// deployables (router/, functions/, webhooks/, certs/) import lib/ and api/ but never each other.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** An import rule that refuses relative imports into the named top-level folders. */
function mayNotImport(folders, why) {
  return {
    'no-restricted-imports': ['error', {
      patterns: [{ regex: `^(\\.\\./)+(${folders.join('|')})/`, message: why }],
    }],
  };
}

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'charts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    files: ['api/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./', message: 'api/ imports nothing of ours (docs/architecture.md).' }] }] },
  },
  {
    files: ['lib/**'],
    rules: mayNotImport(['router', 'functions', 'webhooks', 'certs', 'cli', 'test', 'bench', 'samples'], 'lib/ is shared runtime: it imports only lib/ and api/ (docs/architecture.md).'),
  },
  {
    files: ['router/**'],
    rules: mayNotImport(['functions', 'webhooks', 'certs', 'cli', 'test', 'bench'], 'The router imports only lib/ and api/ (docs/architecture.md).'),
  },
  {
    files: ['functions/**'],
    rules: mayNotImport(['router', 'webhooks', 'certs', 'cli', 'test', 'bench'], 'Functions import only lib/ and api/ (docs/architecture.md).'),
  },
  {
    files: ['webhooks/**'],
    rules: mayNotImport(['router', 'functions', 'cli', 'test', 'bench'], 'The webhook imports only lib/, api/ and certs/ (docs/architecture.md).'),
  },
  {
    files: ['certs/**'],
    rules: mayNotImport(['router', 'functions', 'webhooks', 'cli', 'test', 'bench'], 'certs/ imports only lib/ and api/ (docs/architecture.md).'),
  },
);
