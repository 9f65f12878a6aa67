import { type ApiError, isObject } from './http.ts';

// Output formatting: results on stdout, errors on stderr, secrets labelled.

const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** `error: <message>` and one `  <field>: <description>` line per field violation. */
export function errorLines(err: ApiError): string[] {
  const lines = [`error: ${err.message}`];
  const details = isObject(err.body) && Array.isArray(err.body.details) ? err.body.details : [];
  for (const detail of details) {
    if (!isObject(detail) || detail['@type'] !== BAD_REQUEST || !Array.isArray(detail.fieldViolations)) continue;
    for (const violation of detail.fieldViolations) {
      if (isObject(violation)) lines.push(`  ${String(violation.field ?? '')}: ${String(violation.description ?? '')}`);
    }
  }
  return lines;
}

/** A secret, clearly labelled: it is shown once and cannot be fetched again. */
export function secretLines(label: string, value: string): string[] {
  return [`${label} (shown once, store it now; it cannot be retrieved again):`, `  ${value}`];
}
