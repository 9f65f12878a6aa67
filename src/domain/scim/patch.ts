import { ScimInvalid } from './errors.ts';
import { parsePatchPath, type PatchPath } from './filter.ts';
import { matchesValue, valueDescribedBy } from './evaluate.ts';
import { PATCH_OP_SCHEMA, canonicalSubAttributes, isUserSchema, subAttribute, userAttribute } from './user.ts';

// PATCH (RFC 7644 3.5.2) on a User resource in canonical form: each
// operation — add, replace or remove; with a path, a path with a value
// filter (`emails[type eq "work"].value`), or no path — applied in order
// to a copy. The result is checked as a whole afterwards, like a PUT body,
// so a PATCH can never store what a PUT could not.

export type PatchOpName = 'add' | 'replace' | 'remove';

export interface PatchOperation {
  op: PatchOpName;
  path?: string;
  value?: unknown;
}

/** More operations in one request are refused: no client needs them, and each is work. */
const MAX_PATCH_OPERATIONS = 100;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const syntax = (message: string) => new ScimInvalid('invalidSyntax', message);

function keyOf(body: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(body).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : body[key];
}

function operationOf(raw: unknown, index: number): PatchOperation {
  if (!isObject(raw)) throw syntax(`Operations[${index}] must be an object`);
  for (const key of Object.keys(raw)) {
    if (!['op', 'path', 'value'].includes(key.toLowerCase())) throw syntax(`Operations[${index}].${key.slice(0, 60)} is not a field of a PATCH operation`);
  }
  const op = keyOf(raw, 'op');
  const path = keyOf(raw, 'path');
  const value = keyOf(raw, 'value');
  // Entra ID writes the operation names capitalised ("Replace").
  const name = typeof op === 'string' ? op.toLowerCase() : '';
  if (name !== 'add' && name !== 'replace' && name !== 'remove') throw syntax(`Operations[${index}].op must be add, replace or remove`);
  if (path !== undefined && typeof path !== 'string') throw syntax(`Operations[${index}].path must be a string`);
  if (name === 'remove' && path === undefined) throw new ScimInvalid('noTarget', `Operations[${index}]: remove needs a path`);
  if (name !== 'remove' && value === undefined) throw new ScimInvalid('invalidValue', `Operations[${index}]: ${name} needs a value`);
  return { op: name, ...(path === undefined ? {} : { path }), ...(value === undefined ? {} : { value }) };
}

/** The operations of a PatchOp request body (RFC 7644 3.5.2). */
export function patchOperations(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw syntax('the body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (!['schemas', 'operations'].includes(key.toLowerCase())) throw syntax(`"${key.slice(0, 60)}" is not a field of a PatchOp request`);
  }
  const schemas = keyOf(body, 'schemas');
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_OP_SCHEMA)) throw syntax(`"schemas" must list ${PATCH_OP_SCHEMA}`);
  const operations = keyOf(body, 'Operations');
  if (!Array.isArray(operations) || operations.length === 0) throw syntax('"Operations" must be a non-empty array');
  if (operations.length > MAX_PATCH_OPERATIONS) throw syntax(`at most ${MAX_PATCH_OPERATIONS} operations per request`);
  return operations.map(operationOf);
}

type Target =
  | { kind: 'simple'; name: string }
  | { kind: 'name'; sub?: string }
  | { kind: 'emails'; path: PatchPath; sub?: string }
  /** An attribute the service does not keep (RFC 7643 core or an extension): the operation changes nothing. */
  | { kind: 'ignored' };

function invalidPath(path: string): ScimInvalid {
  return new ScimInvalid('invalidPath', `"${path.slice(0, 100)}" is not a path to an attribute of the User schema`);
}

function targetOf(text: string): Target {
  const path = parsePatchPath(text);
  if (path.attr.uri !== undefined && !isUserSchema(path.attr.uri)) return { kind: 'ignored' };
  const attribute = userAttribute(path.attr.name);
  if (!attribute) throw invalidPath(text);
  if (attribute.kind === 'readOnly') throw new ScimInvalid('mutability', `"${attribute.name}" is set by the service and cannot be changed`);
  if (attribute.kind === 'ignored') return { kind: 'ignored' };
  if (attribute.kind === 'simple') {
    if (path.attr.sub || path.filter) throw invalidPath(text);
    return { kind: 'simple', name: attribute.name };
  }
  const subName = path.attr.sub ?? path.sub;
  const sub = subName === undefined ? undefined : subAttribute(attribute.kind, subName);
  if (subName !== undefined && sub === undefined) throw invalidPath(text);
  if (sub === 'ignored') return { kind: 'ignored' };
  if (attribute.kind === 'name') {
    if (path.filter) throw invalidPath(text);
    return { kind: 'name', ...(sub ? { sub } : {}) };
  }
  return { kind: 'emails', path, ...(sub ? { sub } : {}) };
}

function objectValue(value: unknown, what: string): Record<string, unknown> {
  if (!isObject(value)) throw new ScimInvalid('invalidValue', `the value for ${what} must be an object`);
  return value;
}

function applyToName(doc: Record<string, unknown>, op: PatchOpName, sub: string | undefined, value: unknown): void {
  const name = isObject(doc.name) ? doc.name : {};
  if (sub === undefined) {
    if (op === 'remove') delete doc.name;
    else doc.name = { ...name, ...(canonicalSubAttributes('name', objectValue(value, 'name')) as Record<string, unknown>) };
    return;
  }
  if (op === 'remove') delete name[sub];
  else name[sub] = value;
  doc.name = name;
}

function emailValues(value: unknown): Record<string, unknown>[] {
  const values = Array.isArray(value) ? value : [value];
  return values.map((item) => canonicalSubAttributes('emails', objectValue(item, 'emails')) as Record<string, unknown>);
}

function applyToEmails(doc: Record<string, unknown>, op: PatchOpName, target: { path: PatchPath; sub?: string }, value: unknown): void {
  const current = (Array.isArray(doc.emails) ? doc.emails : []).filter(isObject);
  const { sub } = target;
  const filter = target.path.filter;
  if (!filter) {
    if (sub === undefined) {
      if (op === 'remove') delete doc.emails;
      else doc.emails = op === 'add' ? [...current, ...emailValues(value)] : emailValues(value);
    } else if (op === 'remove') {
      for (const email of current) delete email[sub];
    } else if (current.length === 0) {
      doc.emails = [{ [sub]: value }];
    } else {
      for (const email of current) email[sub] = value;
    }
    return;
  }
  const matched = current.filter((email) => matchesValue(filter, email));
  if (op === 'remove') {
    if (sub === undefined) doc.emails = current.filter((email) => !matched.includes(email));
    else for (const email of matched) delete email[sub];
    return;
  }
  if (matched.length === 0) {
    // RFC 7644 3.5.2.3: a replace whose filter matches nothing fails; an
    // add creates the value its filter describes.
    const described = op === 'add' ? valueDescribedBy(filter) : undefined;
    if (!described) throw new ScimInvalid('noTarget', 'the value filter of the path matches no email');
    const created = sub === undefined ? { ...described, ...emailValues(value)[0] } : { ...described, [sub]: value };
    doc.emails = [...current, canonicalSubAttributes('emails', created)];
    return;
  }
  if (sub !== undefined) {
    for (const email of matched) email[sub] = value;
    return;
  }
  const replacement = emailValues(value)[0]!;
  doc.emails = current.map((email) => (matched.includes(email) ? (op === 'add' ? { ...email, ...replacement } : { ...replacement }) : email));
}

function applyAt(doc: Record<string, unknown>, op: PatchOpName, path: string, value: unknown): void {
  const target = targetOf(path);
  switch (target.kind) {
    case 'ignored':
      return;
    case 'simple':
      if (op === 'remove') delete doc[target.name];
      else doc[target.name] = value;
      return;
    case 'name':
      applyToName(doc, op, target.sub, value);
      return;
    default:
      applyToEmails(doc, op, target, value);
  }
}

/** The resource after the operations, in order; `resource` itself is left as it was. */
export function applyPatch(resource: Record<string, unknown>, operations: PatchOperation[]): Record<string, unknown> {
  const doc = structuredClone(resource);
  for (const operation of operations) {
    if (operation.path !== undefined) {
      applyAt(doc, operation.op, operation.path, operation.value);
      continue;
    }
    // Without a path, the value's attributes are each the target (RFC 7644 3.5.2.1, 3.5.2.3).
    for (const [key, value] of Object.entries(objectValue(operation.value, 'an operation without a path'))) {
      if (key.toLowerCase() === 'schemas') continue;
      applyAt(doc, operation.op, key, value);
    }
  }
  return doc;
}
