import type { Filter, FilterValue } from './filter.ts';
import { InvalidFilter } from './errors.ts';

// A value filter of a PATCH path (`emails[type eq "work"]`, RFC 7644
// 3.5.2) decided on one value of a multi-valued attribute, in memory. The
// values compared here (an email's type, value, display) are not
// caseExact (RFC 7643 4.1.2), so strings compare without letter case.

function field(value: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(value).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : value[key];
}

function compare(actual: unknown, op: string, expected: FilterValue): boolean {
  if (actual === undefined || actual === null) return op === 'ne' ? expected !== null : op === 'eq' && expected === null;
  if (expected === null) return op === 'ne';
  if (typeof actual === 'string' && typeof expected === 'string') {
    const a = actual.toLowerCase();
    const e = expected.toLowerCase();
    switch (op) {
      case 'eq':
        return a === e;
      case 'ne':
        return a !== e;
      case 'co':
        return a.includes(e);
      case 'sw':
        return a.startsWith(e);
      case 'ew':
        return a.endsWith(e);
      case 'gt':
        return a > e;
      case 'ge':
        return a >= e;
      case 'lt':
        return a < e;
      default:
        return a <= e;
    }
  }
  if (typeof actual === 'boolean' && typeof expected === 'boolean') {
    if (op === 'eq') return actual === expected;
    if (op === 'ne') return actual !== expected;
    throw new InvalidFilter(`"${op}" does not compare booleans`);
  }
  return op === 'ne';
}

/** Whether `value` (one element of a multi-valued attribute) satisfies `filter`. */
export function matchesValue(filter: Filter, value: Record<string, unknown>): boolean {
  switch (filter.op) {
    case 'and':
      return matchesValue(filter.left, value) && matchesValue(filter.right, value);
    case 'or':
      return matchesValue(filter.left, value) || matchesValue(filter.right, value);
    case 'not':
      return !matchesValue(filter.filter, value);
    case 'valuePath':
      throw new InvalidFilter('a value filter cannot hold another value filter');
    case 'pr': {
      const actual = field(value, filter.attr.name);
      return actual !== undefined && actual !== null && actual !== '';
    }
    default:
      if (filter.attr.sub) throw new InvalidFilter(`"${filter.attr.name}.${filter.attr.sub}" is not a sub-attribute here`);
      return compare(field(value, filter.attr.name), filter.op, filter.value);
  }
}

/**
 * The sub-attributes a value must have to satisfy `filter` when it is only
 * a conjunction of `eq`: an "add" whose value filter matches nothing
 * creates such a value (`emails[type eq "work"].value` → a work email).
 */
export function valueDescribedBy(filter: Filter): Record<string, FilterValue> | undefined {
  if (filter.op === 'eq' && !filter.attr.sub) return { [filter.attr.name]: filter.value };
  if (filter.op !== 'and') return undefined;
  const left = valueDescribedBy(filter.left);
  const right = valueDescribedBy(filter.right);
  return left && right ? { ...left, ...right } : undefined;
}
