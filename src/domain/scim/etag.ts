import { ScimInvalid } from './errors.ts';

// Versions of a resource as entity tags (RFC 7644 3.14, RFC 9110 8.8.3).
// The version is the user's event sequence, which every write of the user
// moves; the tag is weak because the answer's bytes (a projection, the
// base URL) are not what it versions. Comparisons are weak (RFC 9110
// 8.8.3.2) for If-Match too: RFC 7644 3.14 has clients send back the
// weak tag they were given.

/** One element of the list: an entity tag (its opaque part captured), or nothing, as empty elements are passed over (RFC 9110 5.6.1.2). */
const LIST_ITEM = /[\t ]*(?:(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"[\t ]*)?(?:,|$)/y;
const MAX_HEADER = 4096;
const MAX_TAGS = 50;

export function etagOf(version: string): string {
  return `W/"${version}"`;
}

/** The opaque tags of an If-Match or If-None-Match header, or '*'; a header of another shape is `invalidValue`. */
function tagsOf(header: string, name: string): '*' | string[] {
  if (header.trim() === '*') return '*';
  const malformed = () => new ScimInvalid('invalidValue', `${name} must be * or a list of entity tags such as W/"42"`);
  if (header.length > MAX_HEADER) throw malformed();
  const tags: string[] = [];
  let at = 0;
  while (at < header.length) {
    LIST_ITEM.lastIndex = at;
    const item = LIST_ITEM.exec(header);
    if (!item || item[0] === '') throw malformed();
    if (item[1] !== undefined) tags.push(item[1]);
    at = LIST_ITEM.lastIndex;
  }
  if (tags.length === 0 || tags.length > MAX_TAGS) throw malformed();
  return tags;
}

/**
 * The condition an If-Match or If-None-Match header states: whether a
 * version meets it ('*' is met by any existing resource). Read before
 * anything is done, so that a malformed header changes nothing.
 */
export function tagCondition(header: string, name: 'If-Match' | 'If-None-Match'): (version: string) => boolean {
  const tags = tagsOf(header, name);
  return (version) => tags === '*' || tags.includes(version);
}
