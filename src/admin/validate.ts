import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { InvalidArgument, type FieldViolation } from '../domain/errors.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: true, verbose: true }));

/** `/human/profile/firstName` → `human.profile.firstName`; `/roles/0` → `roles[0]`. */
function fieldPath(pointer: string, child?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
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
      return { field: fieldPath(error.instancePath), description: error.params.limit === 1 ? 'must not be empty' : `must be at least ${error.params.limit} characters` };
    case 'maxLength':
      return { field: fieldPath(error.instancePath), description: `must be at most ${error.params.limit} characters` };
    case 'enum':
      return { field: fieldPath(error.instancePath), description: `must be one of ${(error.params.allowedValues as string[]).join(', ')}` };
    default:
      return { field: fieldPath(error.instancePath) || '(body)', description: (error.parentSchema as { description?: string })?.description ?? error.message ?? 'is invalid' };
  }
}

/** Compiles a JSON Schema into a check that reports every bad field at once. */
export function validator<T>(schema: object): (body: unknown) => T {
  const check = ajv.compile(schema);
  return (body) => {
    if (check(body)) return body as T;
    // One violation per field: the first rule it breaks says enough.
    const seen = new Set<string>();
    const violations = (check.errors ?? []).map(describe).filter((v) => (seen.has(v.field) ? false : (seen.add(v.field), true)));
    throw new InvalidArgument(`invalid request: ${violations.map((v) => `${v.field} ${v.description}`).join('; ')}`, violations);
  };
}
