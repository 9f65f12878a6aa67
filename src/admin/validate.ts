import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { InvalidArgument, type FieldViolation } from '../domain/errors.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: true, verbose: true }));

/** `/human/profile/firstName` → `human.profile.firstName`; `/roles/0` → `roles[0]`. */
function fieldPath(pointer: string, child?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  return parts.reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function describe(error: ErrorObject): FieldViolation {
  switch (error.keyword) {
    case 'required':
      return { field: fieldPath(error.instancePath, String(error.params.missingProperty)), description: 'is required' };
    case 'additionalProperties':
      return { field: fieldPath(error.instancePath, String(error.params.additionalProperty)), description: 'is not a known field' };
    case 'minLength':
      return {
        field: fieldPath(error.instancePath),
        description: error.params.limit === 1 ? 'must not be empty' : `must be at least ${error.params.limit} characters`,
      };
    case 'maxLength':
      return { field: fieldPath(error.instancePath), description: `must be at most ${error.params.limit} characters` };
    case 'enum':
      return { field: fieldPath(error.instancePath), description: `must be one of ${(error.params.allowedValues as string[]).join(', ')}` };
    default:
      return {
        field: fieldPath(error.instancePath) || '(body)',
        description: (error.parentSchema as { description?: string })?.description ?? error.message ?? 'is invalid',
      };
  }
}

/**
 * Strings PostgreSQL cannot store (NUL) or that are not Unicode (lone
 * surrogates) are refused at the edge, wherever they sit in the body.
 */
function unstorableStrings(value: unknown, pointer = ''): FieldViolation[] {
  if (typeof value === 'string') {
    return value.includes('\u0000') || !value.isWellFormed()
      ? [{ field: fieldPath(pointer) || '(body)', description: 'must not contain NUL characters or invalid Unicode' }]
      : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => unstorableStrings(item, `${pointer}/${i}`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) => [
      ...unstorableStrings(key, pointer).map((v) => ({ ...v, field: fieldPath(pointer, '(key)') })),
      ...unstorableStrings(item, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`),
    ]);
  }
  return [];
}

/** One violation per field: the first rule it breaks says enough. */
function onePerField(violations: FieldViolation[]): FieldViolation[] {
  const seen = new Set<string>();
  return violations.filter((v) => {
    if (seen.has(v.field)) return false;
    seen.add(v.field);
    return true;
  });
}

export function invalidRequest(violations: FieldViolation[]): InvalidArgument {
  const unique = onePerField(violations);
  return new InvalidArgument(`invalid request: ${unique.map((v) => `${v.field} ${v.description}`).join('; ')}`, unique);
}

/**
 * Compiles a JSON Schema into a check that reports every bad field at once.
 * `extra` adds rules a schema cannot express; they are reported together
 * with the schema's, so one response names every bad field.
 */
export function validator<T>(schema: object, extra?: (body: T) => FieldViolation[]): (body: unknown) => T {
  const check = ajv.compile(schema);
  return (body) => {
    const valid = check(body);
    const violations = [...unstorableStrings(body), ...(valid ? [] : (check.errors ?? []).map(describe))];
    if (extra && body && typeof body === 'object' && !Array.isArray(body)) violations.push(...extra(body as T));
    if (violations.length) throw invalidRequest(violations);
    return body as T;
  };
}
