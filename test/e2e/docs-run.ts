/** The docs docs.itest.ts types against a lab, in order (doc-blocks.ts says how blocks are marked). */
export const RUN = ['README.md', 'docs/dns.md', 'docs/images.md'];
