// The error of a command that failed outside the API: its own module, so every table of commands can throw it.

/** An expected failure outside the API (a file that cannot be read or written): exit 1. */
export class CliError extends Error {
  /** Printed on stdout before the error, e.g. a secret that must not be lost. */
  readonly output: string[];
  constructor(message: string, output: string[] = []) {
    super(message);
    this.output = output;
  }
}
