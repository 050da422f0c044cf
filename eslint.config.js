// Lint: typescript-eslint's recommended rules (type-checking itself is `tsc --noEmit`), and the import
// boundaries of docs/architecture.md: api/ imports nothing of ours, lib/ only lib/ and api/, the
// deployables (router/, functions/, webhooks/, certs/) import lib/ and api/ but never each other, and
// inside router/ and webhooks/ a stage imports only the stages below it (router: loops > intake > reconcile >
// apply > base, with history beside intake; webhooks: lifecycle > gateway > base, with history beside lifecycle).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * A pattern that refuses relative imports into the named top-level folders. test/support/ stays open: it is
 * what colocated unit tests share (test/layout/shipped-imports.test.ts keeps shipped files off test/ whole).
 */
function folders(names, why) {
  const folder = (name) => (name === 'test' ? 'test/(?!support/)' : `${name}/`);
  return { regex: `^(\\.\\./)+(${names.map(folder).join('|')})`, message: why };
}

/** An import rule made of that one pattern. */
function mayNotImport(names, why) {
  return { 'no-restricted-imports': ['error', { patterns: [folders(names, why)] }] };
}

const ROUTER_ONLY_LIB = folders(['functions', 'webhooks', 'certs', 'cli', 'test', 'bench'], 'The router imports only lib/ and api/ (docs/architecture.md).');
const STAGES = ['loops', 'intake', 'history', 'reconcile', 'apply', 'base', 'sharding'];

/**
 * The import rule of one router stage (a folder of router/): the router's own boundary, no import of the
 * stages it may not use, and none of the assembly (router/*.ts: index, start-router, router-config,
 * leader-election), which wires the stages together and is imported by none.
 */
function routerStage(stage, mayUse) {
  const refused = STAGES.filter((s) => s !== stage && !mayUse.includes(s));
  const why = `router/${stage}/ may import ${mayUse.length > 0 ? mayUse.map((s) => `router/${s}/`).join(', ') : 'no other stage'}: a stage imports only stages below it (docs/architecture.md, "Router stages").`;
  return {
    files: [`router/${stage}/**`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          ROUTER_ONLY_LIB,
          { regex: `^\\.\\./(\\.\\./router/)?(${refused.join('|')})/`, message: why },
          { regex: '^\\.\\./(\\.\\./router/)?[^./][^/]*\\.ts$', message: `router/${stage}/ does not import the router's assembly (router/*.ts wires the stages together; docs/architecture.md, "Router stages").` },
        ],
      }],
    },
  };
}

/** The CLI and the benchmarks take a deployable's code from its public face, never from its stages (the router's history API server has its own, loaded on demand). */
const THROUGH_INDEX = {
  regex: '^(\\.\\./)+(router|webhooks)/(?!index\\.ts$|history-api\\.ts$)',
  message: 'Take what you need of the router or the webhook from router/index.ts or webhooks/index.ts (export it there if missing): their stages are theirs to move (docs/architecture.md).',
};

const WEBHOOK_ONLY = folders(['router', 'functions', 'cli', 'test', 'bench'], 'The webhook imports only lib/, api/ and certs/ (docs/architecture.md).');
const WEBHOOK_STAGES = ['lifecycle', 'history', 'gateway', 'base'];

/**
 * The import rule of one webhook stage (a folder of webhooks/): lifecycle (keeping the served hooks and the
 * webhook configurations in step) > gateway (the admission path) > base (the hook model); none imports the
 * assembly (webhooks/*.ts: run-webhook, server, config), which wires the stages together.
 */
function webhookStage(stage, mayUse) {
  const refused = WEBHOOK_STAGES.filter((s) => s !== stage && !mayUse.includes(s));
  const why = `webhooks/${stage}/ may import ${mayUse.length > 0 ? mayUse.map((s) => `webhooks/${s}/`).join(', ') : 'no other stage'}: a stage imports only stages below it (docs/architecture.md, "Webhook stages").`;
  return {
    files: [`webhooks/${stage}/**`],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          WEBHOOK_ONLY,
          ...(refused.length > 0 ? [{ regex: `^\\.\\./(\\.\\./webhooks/)?(${refused.join('|')})/`, message: why }] : []),
          { regex: '^\\.\\./(\\.\\./webhooks/)?[^./][^/]*\\.ts$', message: `webhooks/${stage}/ does not import the webhook's assembly (webhooks/*.ts wires the stages together; docs/architecture.md, "Webhook stages").` },
        ],
      }],
    },
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
    rules: { 'no-restricted-imports': ['error', { patterns: [ROUTER_ONLY_LIB] }] },
  },
  // Router stages (later entries replace the router/** rule for their files, so each repeats its patterns).
  routerStage('loops', ['intake', 'reconcile', 'apply', 'base']),
  // The reconcile history (flight-recorder files, the history API) reads what reconcile records; no stage reads it.
  routerStage('history', ['reconcile', 'apply', 'base']),
  routerStage('intake', ['reconcile', 'apply', 'base', 'sharding']),
  routerStage('reconcile', ['apply', 'base']),
  routerStage('apply', ['base']),
  routerStage('base', []),
  routerStage('sharding', ['base']),
  {
    files: ['functions/**'],
    rules: mayNotImport(['router', 'webhooks', 'certs', 'cli', 'test', 'bench'], 'Functions import only lib/ and api/ (docs/architecture.md).'),
  },
  {
    files: ['webhooks/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [WEBHOOK_ONLY] }] },
  },
  // Webhook stages (as the router's: each replaces the webhooks/** rule for its files and repeats its patterns).
  webhookStage('lifecycle', ['gateway', 'base']),
  // The admission history API serves what the gateway records; no stage reads it (as the router's history).
  webhookStage('history', ['gateway', 'base']),
  webhookStage('gateway', ['base']),
  webhookStage('base', []),
  {
    files: ['bench/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [folders(['test'], 'bench/ takes its harness from test/support/ only (what tests and benchmarks share), never from a suite.'), THROUGH_INDEX] }] },
  },
  {
    // Colocated unit tests may reach inside (to build a history file, a Loop) as the stages' own tests do.
    files: ['cli/**'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [THROUGH_INDEX] }] },
  },
  {
    files: ['certs/**'],
    rules: mayNotImport(['router', 'functions', 'webhooks', 'cli', 'test', 'bench'], 'certs/ imports only lib/ and api/ (docs/architecture.md).'),
  },
);
