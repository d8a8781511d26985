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

const layerRules = Object.entries(LAYERS).map(([pkg, allowed]) => ({
  files: [`${pkg}/src/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
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
        ],
      },
    ],
  },
}));

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
  // The web console's page (console/, docs/console.md): browser code bundled by esbuild, served by the
  // API server as static files. It talks to the cluster only over HTTP, so it imports nothing of ours,
  // and no package imports it (the relative-path rule above keeps it out of the agent and the rest).
  {
    files: ['console/src/**/*.{ts,tsx}'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', sessionStorage: 'readonly', Headers: 'readonly', Response: 'readonly', TextDecoderStream: 'readonly' } },
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@nodelet/*', 'node:*'], message: 'the console page runs in the browser: it imports nothing of ours and no Node module' }] }],
    },
  },
);
