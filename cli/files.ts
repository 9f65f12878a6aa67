import { readFileSync } from 'node:fs';
import { CliError } from './cli-error.ts';

// Files the commands read.

export function readSecretFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new CliError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
