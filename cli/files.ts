import { readFileSync } from 'node:fs';

// Files the commands read, and the error of a file (or any failure outside
// the API) that exits with 1.

/** An expected failure outside the API (a file that cannot be read or written): exit 1. */
export class CliError extends Error {
  /** Printed on stdout before the error, e.g. a secret that must not be lost. */
  readonly output: string[];
  constructor(message: string, output: string[] = []) {
    super(message);
    this.output = output;
  }
}

export function readSecretFile(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new CliError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
