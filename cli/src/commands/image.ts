import type { Command } from 'commander';

/** Registers the `nodelet image` command family. (Placeholder until its issue lands.) */
export function register(_program: Command): void {}
