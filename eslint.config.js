// Lint rules, and the architecture's import boundaries (docs/adr/0022-layout-by-domain.md):
// a boundary crossed fails `npm run lint`, which `npm test` and CI run.
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

const domains = ['accounts', 'projects', 'monitors', 'heartbeats', 'notifications', 'triggers', 'status-pages', 'maintenance'];
const frontEnds = ['web', 'mcp'];
const roots = ['runtime', 'cli'];
const any = (names) => `(^|/)(${names.join('|')})/`;
// A repository module: where a domain's SQL lives.
const repoFile = String.raw`(^|/)([\w-]*-)?(repo|store)\.ts$`;

const rule = (...patterns) => ['error', { patterns }];
const pattern = (regex, message, extra = {}) => ({ regex, message, ...extra });

const agentInternals = pattern(
  String.raw`(^|/)probe-agent/`,
  'The control plane and the probe agent exchange data through shared/ only (contracts, subjects).',
);

export default tseslint.config(
  {
    ignores: ['node_modules/', 'data/', 'dist/', '.test-data/', 'test-artifacts/', 'bench/results/', 'control-plane/src/web/assets/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly' },
    },
    settings: { 'import-x/extensions': ['.ts', '.mjs', '.js'], 'import-x/resolver': { node: { extensions: ['.ts', '.mjs', '.js'] } } },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-self-import': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'error',
      'no-undef': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      // A variable set once by an awaited start, read by closures made before it.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      'no-restricted-properties': [
        'error',
        { property: '_zod', message: "Zod's internals change between releases: read what a schema exposes (shape, options, meta)." },
        { property: '_def', message: "Zod's internals change between releases: read what a schema exposes (shape, options, meta)." },
      ],
    },
  },
  {
    // Tests and benchmarks read arbitrary JSON, drop references on purpose (memory figures) and
    // use short-circuit statements in polling loops.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-expressions': ['error', { allowShortCircuit: true, allowTernary: true }],
      'no-useless-assignment': 'off',
    },
  },
  {
    files: ['shared/**/*.ts'],
    rules: {
      'no-restricted-imports': rule(
        pattern(String.raw`(^|/)(control-plane|probe-agent)/`, 'shared/ is what both sides use: it imports neither of them.'),
      ),
    },
  },
  {
    files: ['probe-agent/**/*.ts'],
    rules: {
      'no-restricted-imports': rule(
        pattern(
          String.raw`(^|/)control-plane/`,
          'The probe agent talks to NATS only: what it shares with the control plane lives in shared/.',
        ),
      ),
    },
  },
  {
    files: ['control-plane/src/platform/**/*.ts'],
    rules: {
      'no-restricted-imports': rule(
        pattern(any([...domains, ...frontEnds, ...roots]), 'platform/ lies below the domains: it imports none of them.'),
        agentInternals,
      ),
    },
  },
  ...domains.map((domain) => ({
    files: [`control-plane/src/${domain}/**/*.ts`],
    rules: {
      'no-restricted-imports': rule(
        pattern(any([...frontEnds, ...roots]), 'A domain does not import the front ends or the composition roots (runtime/, cli/).'),
        pattern(
          any(domains.filter((d) => d !== domain)) + String.raw`(.*/)?` + repoFile.replace('(^|/)', ''),
          "A domain does not read another domain's tables: call that domain's service.",
        ),
        agentInternals,
      ),
    },
  })),
  {
    files: frontEnds.map((f) => `control-plane/src/${f}/**/*.ts`),
    rules: {
      'no-restricted-imports': rule(
        pattern(repoFile, 'Front ends call domain services, never repositories.', { allowTypeImports: true }),
        pattern(any(roots), 'Front ends do not import the composition roots (runtime/, cli/).'),
        agentInternals,
      ),
    },
  },
  {
    files: ['control-plane/src/runtime/**/*.ts'],
    rules: { 'no-restricted-imports': rule(agentInternals) },
  },
  {
    files: ['control-plane/src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': rule(
        pattern(
          String.raw`(^|/)probe-agent/src/(?!agent\.ts$)`,
          'The CLI starts the probe agent through its entry point (probe-agent/src/agent.ts) only.',
        ),
      ),
    },
  },
);
