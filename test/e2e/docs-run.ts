/**
 * The docs docs.itest.ts types against a lab, in order (doc-blocks.ts says how blocks are marked):
 * the README first (it starts the `web` deployment and the `client` pod the others use), then the
 * pages whose blocks run on that lab. Every other page has each of its blocks marked skip.
 */
export const RUN = ['README.md', 'docs/dns.md', 'docs/images.md', 'docs/metrics.md', 'docs/agent.md', 'docs/security.md', 'docs/cni.md'];
