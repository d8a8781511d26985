import { readdir } from 'node:fs/promises';

/**
 * The names in directory `dir`, or none when it does not exist (a state directory not made yet);
 * any other failure (EACCES, ENOTDIR) is thrown.
 */
export async function readdirIfExists(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

