import { ScimInvalid } from './errors.ts';
import { attrPathOf } from './filter.ts';
import { isUserSchema } from './user.ts';

// Which attributes an answer carries (RFC 7644 3.4.2.5, 3.9): `attributes`
// names the only ones to return, `excludedAttributes` the ones to leave out
// of the default set. `id` and `schemas` are returned always (RFC 7643 3,
// `returned: always`). Names are case-insensitive and may be qualified with
// the User schema's URI; a name the resource does not have (an extension's,
// one the service does not keep) is passed over, as RFC 7644 3.9 asks of
// attributes that are not returned.

/** A list longer than this is no client's and is refused before it is read. */
const MAX_NAMES = 100;
const MAX_TEXT = 4096;
const ALWAYS_RETURNED = new Set(['id', 'schemas']);

interface Selected {
  name: string;
  sub?: string;
}

export interface Projection {
  mode: 'include' | 'exclude';
  paths: Selected[];
}

function pathsOf(parameter: string, names: string[]): Selected[] {
  if (names.length > MAX_NAMES) throw new ScimInvalid('invalidValue', `"${parameter}" names more than ${MAX_NAMES} attributes`);
  const paths: Selected[] = [];
  for (const name of names) {
    const path = name.length <= 300 ? attrPathOf(name) : undefined;
    if (!path) throw new ScimInvalid('invalidValue', `"${parameter}" holds "${name.slice(0, 60)}", which is no attribute path such as name.givenName`);
    if (path.uri !== undefined && !isUserSchema(path.uri)) continue;
    paths.push({ name: path.name.toLowerCase(), ...(path.sub === undefined ? {} : { sub: path.sub.toLowerCase() }) });
  }
  return paths;
}

/** A comma-separated list of a query string (RFC 7644 3.9), its names trimmed; an empty entry is malformed. */
export function namesOfList(parameter: string, text: string): string[] {
  if (text.length > MAX_TEXT) throw new ScimInvalid('invalidValue', `"${parameter}" is longer than ${MAX_TEXT} characters`);
  return text.split(',').map((name) => name.trim());
}

/**
 * The projection the request asks for, or undefined for the default set.
 * Giving both parameters is refused: RFC 7644 3.9 defines each against the
 * default set, not one against the other.
 */
export function projectionOf(attributes: string[] | undefined, excludedAttributes: string[] | undefined): Projection | undefined {
  if (attributes !== undefined && excludedAttributes !== undefined)
    throw new ScimInvalid('invalidValue', 'give "attributes" or "excludedAttributes", not both');
  if (attributes !== undefined) return { mode: 'include', paths: pathsOf('attributes', attributes) };
  if (excludedAttributes !== undefined) return { mode: 'exclude', paths: pathsOf('excludedAttributes', excludedAttributes) };
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Only the named sub-attributes of a complex value, or of each value of a multi-valued one. */
function pick(value: unknown, subs: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => pick(item, subs)).filter((item) => !isObject(item) || Object.keys(item).length > 0);
  if (!isObject(value)) return undefined;
  return Object.fromEntries(Object.entries(value).filter(([key]) => subs.has(key.toLowerCase())));
}

/** The value without the named sub-attributes; undefined when nothing is left of it. */
function drop(value: unknown, subs: Set<string>): unknown {
  if (Array.isArray(value)) {
    const kept = value.map((item) => drop(item, subs)).filter((item) => item !== undefined);
    return kept.length ? kept : undefined;
  }
  if (!isObject(value)) return value;
  const kept = Object.entries(value).filter(([key]) => !subs.has(key.toLowerCase()));
  return kept.length ? Object.fromEntries(kept) : undefined;
}

function grouped(paths: Selected[]): Map<string, Set<string> | 'whole'> {
  const byName = new Map<string, Set<string> | 'whole'>();
  for (const { name, sub } of paths) {
    const seen = byName.get(name);
    if (sub === undefined || seen === 'whole') byName.set(name, 'whole');
    else byName.set(name, (seen ?? new Set<string>()).add(sub));
  }
  return byName;
}

/** The resource as the projection shows it; the default set when there is none. */
export function project(resource: Record<string, unknown>, projection: Projection | undefined): Record<string, unknown> {
  if (!projection) return resource;
  const byName = grouped(projection.paths);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resource)) {
    const lower = key.toLowerCase();
    const selected = byName.get(lower);
    if (ALWAYS_RETURNED.has(lower)) out[key] = value;
    else if (projection.mode === 'include') {
      const shown = selected === undefined ? undefined : selected === 'whole' ? value : pick(value, selected);
      const empty = shown === undefined || (isObject(shown) && Object.keys(shown).length === 0) || (Array.isArray(shown) && shown.length === 0);
      if (!empty) out[key] = shown;
    } else if (selected !== 'whole') {
      const shown = selected === undefined ? value : drop(value, selected);
      if (shown !== undefined) out[key] = shown;
    }
  }
  return out;
}
