// Lint rules, including the import layers of docs/architecture.md: imports only go downward.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * What each package may import of ours (docs/contributing.md, layers). The one source of truth for the
 * package graph: scripts/check-package-graph.mjs (run by `make lint`) holds each package.json's
 * dependencies and tsconfig.json's references to it.
 */
export const LAYERS = {
  base: [],
  proto: [],
  systemd: ['base'],
  api: ['base'],
  oci: ['base'],
  cni: ['base'],
  'cri-client': ['base', 'proto'],
  'lab-runtime': ['base', 'oci'],
  agent: ['base', 'api', 'oci', 'cni', 'cri-client', 'systemd'],
  'control-plane': ['base', 'api', 'oci', 'systemd'],
  cli: ['base', 'api', 'oci', 'cni', 'cri-client', 'lab-runtime', 'systemd'],
};
const ALL = Object.keys(LAYERS);

/**
 * `.catch(() => undefined)` (or `{}`, `null`, `void 0`) throws the failure away. Allowed only with a
 * comment on the same line, or the line just above, saying why losing it is fine (issue 28: the PLEG
 * dropped every container-status failure this way); otherwise handle it (log, count, rethrow).
 */
const isNothing = (n) =>
  (n.type === 'Identifier' && n.name === 'undefined') ||
  (n.type === 'Literal' && n.value === null) ||
  (n.type === 'UnaryExpression' && n.operator === 'void' && n.argument.type === 'Literal') ||
  (n.type === 'BlockStatement' && n.body.length === 0);
const swallowedCatch = {
  meta: { type: 'problem', messages: { bare: 'a swallowed .catch() needs a comment on this line (or the one above) saying why the failure does not matter; else log or handle it' } },
  create(context) {
    const source = context.sourceCode;
    return {
      CallExpression(node) {
        const cb = node.arguments[0];
        if (node.callee.type !== 'MemberExpression' || node.callee.property.type !== 'Identifier' || node.callee.property.name !== 'catch') return;
        if (node.arguments.length !== 1 || !cb || (cb.type !== 'ArrowFunctionExpression' && cb.type !== 'FunctionExpression') || !isNothing(cb.body)) return;
        const line = node.callee.property.loc.start.line;
        const explained = source.getAllComments().some((c) => c.loc.end.line >= line - 1 && c.loc.start.line <= cb.loc.end.line);
        if (!explained) context.report({ node: node.callee.property, messageId: 'bare' });
      },
    };
  },
};

/** The import patterns that keep `pkg` in its layer (the rule's options; AGENT_FOLDERS adds to the agent's). */
const layerPatterns = (pkg, allowed) => [
  {
    group: ALL.filter((p) => p !== pkg && !allowed.includes(p)).flatMap((p) => [`@nodelet/${p}`, `@nodelet/${p}/*`]),
    message: `@nodelet/${pkg} may only import ${allowed.length ? allowed.map((a) => '@nodelet/' + a).join(', ') : 'nothing of ours'} (imports go downward, docs/architecture.md)`,
  },
  { group: ['../../*/src/*', '../../../*/src/*'], message: 'import other packages by name, not by relative path' },
  ...(pkg === 'cri-client' ? [] : [{ group: ['@grpc/grpc-js'], message: 'only cri-client talks gRPC' }]),
  // Only `nodelet doctor` and `nodelet node info` read the machine inventory, through a
  // dynamic import in cli/src/commands/doctor/inventory.ts: a static import would load it
  // for every command, and the agent must never carry it (its memory, docs/agent.md).
  {
    group: ['systeminformation', 'systeminformation/*'],
    message: pkg === 'cli' ? 'load systeminformation with await import() in the command that needs it (doctor/inventory.ts)' : 'only the cli reads the machine inventory (systeminformation)',
  },
];
const restrictImports = (patterns, paths) => ({ 'no-restricted-imports': ['error', { ...(paths ? { paths } : {}), patterns }] });
const layerRules = Object.entries(LAYERS).map(([pkg, allowed]) => ({ files: [`${pkg}/src/**/*.ts`], rules: restrictImports(layerPatterns(pkg, allowed)) }));

/**
 * Folder layers inside the agent (docs/agent.md, "What it does"): `kubecontainer/` holds the pod and
 * container types and pure helpers every folder shares and imports no other folder of the agent;
 * the pod workers, status, PLEG and prober depend on kubecontainer's types and on interfaces, never
 * on `runtime/` (which imports them). A later config object replaces the rule's options, so each
 * folder's list repeats the agent's layer patterns. That the folder graph has no cycle at all is
 * checked by agent/src/folder-graph.test.ts.
 */
const NOT_RUNTIME = { group: ['../runtime/*'], message: 'this folder depends on kubecontainer/ and interfaces, not on runtime/ (which imports it): move the shared type to kubecontainer/' };
export const AGENT_FOLDERS = {
  kubecontainer: [{ group: ['../*'], message: 'kubecontainer/ holds the types and pure helpers the agent shares: it imports no other folder of the agent' }],
  podworkers: [NOT_RUNTIME],
  status: [NOT_RUNTIME],
  pleg: [NOT_RUNTIME],
  prober: [NOT_RUNTIME],
};
// The agent's daemon code imports @nodelet/api/agent: the package root loads the API server's
// schema, defaulting and validation of every kind (heap on every node; docs/performance.md,
// "Agent footprint"; agent/src/light-imports.test.ts checks what the entry loads). Static pod
// manifests load the root's pod checks with await import() (source/static-pods.ts). Tests may
// import the root.
const AGENT_API_ROOT = [{ name: '@nodelet/api', message: 'the agent imports @nodelet/api/agent (the root loads the API server\'s schema, defaulting and validation)' }];
const AGENT_TESTS = ['**/*.test.ts', '**/testing/**'];
const agentLightImports = { files: ['agent/src/**/*.ts'], ignores: AGENT_TESTS, rules: restrictImports(layerPatterns('agent', LAYERS.agent), AGENT_API_ROOT) };
const agentFolderRules = Object.entries(AGENT_FOLDERS).flatMap(([folder, extra]) => {
  const patterns = [...layerPatterns('agent', LAYERS.agent), ...extra];
  return [
    { files: [`agent/src/${folder}/**/*.ts`], ignores: AGENT_TESTS, rules: restrictImports(patterns, AGENT_API_ROOT) },
    { files: AGENT_TESTS.map((t) => `agent/src/${folder}/${t}`), rules: restrictImports(patterns) },
  ];
});

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'proto/src/gen/**', 'build/**', '.state/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', DOMException: 'readonly', performance: 'readonly', fetch: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-explicit-any': 'warn',
      // An empty catch must say why the failure is harmless (a comment in the block) or handle it.
      'no-empty': 'error',
    },
  },
  ...layerRules,
  agentLightImports,
  ...agentFolderRules,
  // Daemon and tool code, where a lost failure hides a fault; tests' best-effort cleanup is not held to it.
  {
    files: ['*/src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.itest.ts', '**/testing/**'],
    plugins: { nodelet: { rules: { 'swallowed-catch': swallowedCatch } } },
    rules: { 'nodelet/swallowed-catch': 'error' },
  },
  // The web console's page (console/, docs/console.md): browser code bundled by esbuild, served by the
  // API server as static files. It talks to the cluster only over HTTP, so it imports nothing of ours
  // at run time, and no package imports it (the relative-path rule above keeps it out of the agent and
  // the rest). A type-only import of a wire shape (`import type`, erased by esbuild) is allowed, so the
  // page reads what the server serves by the server's own declaration rather than a copy.
  {
    files: ['console/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', sessionStorage: 'readonly', Headers: 'readonly', Response: 'readonly', TextDecoderStream: 'readonly' } },
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [
        { group: ['@nodelet/*'], allowTypeImports: true, message: 'the console page runs in the browser: it imports nothing of ours (a type-only import is erased)' },
        { group: ['node:*'], message: 'the console page runs in the browser: it imports no Node module' },
      ] }],
    },
  },
);
