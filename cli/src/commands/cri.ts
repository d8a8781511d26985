import type { Command } from 'commander';

/** Registers the `nodelet cri` command family. (Placeholder until its issue lands.) */
export function register(_program: Command): void {}
