import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { COMPARE_OPS, parseFilter, parsePatchPath, type Filter, type FilterValue } from '../../src/domain/scim/filter.ts';
import { InvalidFilter, ScimInvalid } from '../../src/domain/scim/errors.ts';
import { Conditions } from '../../src/storage/search.ts';
import { userFilterSql } from '../../src/storage/scim-filter-sql.ts';
import { listScimUsers } from '../../src/storage/scim-users.ts';
import { openDatabase, type Database } from '../../src/storage/database.ts';
import { migrate } from '../../src/storage/migrate.ts';
import { DATABASE_URL, uniqueName } from '../support/stores.ts';

// The SCIM filter grammar (RFC 7644 3.4.2.2) read into a tree, and the
// tree compiled to parameterised SQL: the RFC's own examples parse; no
// input whatever makes the parser throw anything but InvalidFilter; a
// printed tree reads back as itself; every value the caller wrote is a
// parameter, never SQL text, and every compiled filter runs.

const RFC_EXAMPLES = [
  'userName eq "bjensen"',
  `name.familyName co "O'Malley"`,
  'userName sw "J"',
  'urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"',
  'title pr',
  'meta.lastModified gt "2011-05-13T04:42:34Z"',
  'meta.lastModified ge "2011-05-13T04:42:34Z"',
  'meta.lastModified lt "2011-05-13T04:42:34Z"',
  'meta.lastModified le "2011-05-13T04:42:34Z"',
  'title pr and userType eq "Employee"',
  'title pr or userType eq "Intern"',
  'schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"',
  'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
  'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
  'userType eq "Employee" and (emails.type eq "work")',
  'userType eq "Employee" and emails[type eq "work" and value co "@example.com"]',
  'emails[type eq "work" and value co "@example.com"] or ims[type eq "xmpp" and value co "@foo.com"]',
];

describe('parsing', () => {
  for (const example of RFC_EXAMPLES) {
    it(`reads the example of RFC 7644 3.4.2.2: ${example}`, () => {
      assert.ok(parseFilter(example));
    });
  }

  it('builds the tree: and before or, not over parentheses, value paths, literals', () => {
    assert.deepEqual(parseFilter('a eq "x" or b pr and not (c ne 1.5)'), {
      op: 'or',
      left: { op: 'eq', attr: { name: 'a' }, value: 'x' },
      right: { op: 'and', left: { op: 'pr', attr: { name: 'b' } }, right: { op: 'not', filter: { op: 'ne', attr: { name: 'c' }, value: 1.5 } } },
    });
    assert.deepEqual(parseFilter('emails[type eq "work"].value sw "a\\"b"'), {
      op: 'valuePath',
      attr: { name: 'emails' },
      filter: { op: 'and', left: { op: 'eq', attr: { name: 'type' }, value: 'work' }, right: { op: 'sw', attr: { name: 'value' }, value: 'a"b' } },
    });
    assert.deepEqual(parseFilter('x eq TRUE and y eq false and z eq Null'), {
      op: 'and',
      left: { op: 'and', left: { op: 'eq', attr: { name: 'x' }, value: true }, right: { op: 'eq', attr: { name: 'y' }, value: false } },
      right: { op: 'eq', attr: { name: 'z' }, value: null },
    });
  });

  it('reads PATCH paths: attribute, sub-attribute, value filter with and without a sub-attribute', () => {
    assert.deepEqual(parsePatchPath('name.givenName'), { attr: { name: 'name', sub: 'givenName' } });
    assert.deepEqual(parsePatchPath('emails[type eq "work"].value'), {
      attr: { name: 'emails' },
      filter: { op: 'eq', attr: { name: 'type' }, value: 'work' },
      sub: 'value',
    });
    assert.throws(
      () => parsePatchPath('emails[type eq "work"].'),
      (err) => err instanceof ScimInvalid && err.scimType === 'invalidPath',
    );
    assert.throws(() => parsePatchPath('emails[type eq]'), InvalidFilter);
  });
});

/** Prints a tree back as filter text, with every binary operation in parentheses. */
function print(filter: Filter): string {
  const attr = (a: { uri?: string; name: string; sub?: string }) => `${a.uri ? `${a.uri}:` : ''}${a.name}${a.sub ? `.${a.sub}` : ''}`;
  switch (filter.op) {
    case 'and':
    case 'or':
      return `(${print(filter.left)} ${filter.op} ${print(filter.right)})`;
    case 'not':
      return `not (${print(filter.filter)})`;
    case 'valuePath':
      return `${attr(filter.attr)}[${print(filter.filter)}]`;
    case 'pr':
      return `${attr(filter.attr)} pr`;
    default:
      return `${attr(filter.attr)} ${filter.op} ${JSON.stringify(filter.value)}`;
  }
}

/** Trees over the filterable attributes, with values of every JSON type. */
const attrName = fc.constantFrom('userName', 'name.givenName', 'name.familyName', 'externalId', 'active', 'emails.value', 'meta.lastModified', 'displayName');
const stringValue = fc.string({ maxLength: 12, unit: 'grapheme' }).filter((s) => !s.includes('\u0000') && s.isWellFormed());
const value: fc.Arbitrary<FilterValue> = fc.oneof(stringValue, fc.boolean(), fc.constant(null), fc.integer({ min: -1000, max: 1000 }));
const leaf: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({ op: fc.constantFrom(...COMPARE_OPS), attr: attrName.map(toAttr), value }),
  fc.record({ op: fc.constant('pr' as const), attr: attrName.map(toAttr) }),
);
function toAttr(name: string) {
  const [head, sub] = name.split('.');
  return sub ? { name: head!, sub } : { name: head! };
}
const emailLeaf: fc.Arbitrary<Filter> = fc.record({
  op: fc.constantFrom(...COMPARE_OPS),
  attr: fc.constantFrom('type', 'value', 'primary').map((name) => ({ name })),
  value,
});
const { tree } = fc.letrec<{ tree: Filter }>((recurse) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ op: fc.constantFrom('and' as const, 'or' as const), left: recurse('tree'), right: recurse('tree') }),
    fc.record({ op: fc.constant('not' as const), filter: recurse('tree') }),
    fc.record({ op: fc.constant('valuePath' as const), attr: fc.constant({ name: 'emails' }), filter: emailLeaf }),
  ),
}));

/** Text made of the grammar's own pieces, most of it wrong in some way. */
const tokenSoup = fc
  .array(
    fc.constantFrom(
      '(',
      ')',
      '[',
      ']',
      '.',
      'and',
      'or',
      'not',
      'eq',
      'pr',
      'gt',
      'co',
      'userName',
      'emails',
      'name.givenName',
      '"x"',
      '"',
      '1',
      '-',
      'true',
      'null',
      ':',
      'urn:x:y',
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(' '));

function onlyInvalidFilter(text: string): void {
  try {
    parseFilter(text);
  } catch (err) {
    assert.ok(err instanceof InvalidFilter, `"${text}" threw ${String(err)}`);
  }
}

describe('properties (fast-check)', () => {
  it('no string makes the parser throw anything but InvalidFilter', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200, unit: 'binary' }), onlyInvalidFilter), { numRuns: 3000 });
    fc.assert(fc.property(tokenSoup, onlyInvalidFilter), { numRuns: 3000 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), (depth) => onlyInvalidFilter(`${'not ('.repeat(depth)}a pr${')'.repeat(depth)}`)),
      { numRuns: 50 },
    );
  });

  it('no string makes the PATCH path parser throw anything but a SCIM 400', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 100, unit: 'binary' }), tokenSoup), (text) => {
        try {
          parsePatchPath(text);
        } catch (err) {
          assert.ok(err instanceof ScimInvalid, `"${text}" threw ${String(err)}`);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('a printed tree reads back as the same tree', () => {
    fc.assert(
      fc.property(tree, (filter) => {
        assert.deepEqual(parseFilter(print(filter)), parseFilter(print(parseFilter(print(filter)))));
        assert.equal(print(parseFilter(print(filter))), print(filter));
      }),
      { numRuns: 1000 },
    );
  });

  it('compiling puts every value into the parameters, never into the SQL, or refuses with InvalidFilter', () => {
    const marker = fc.string({ minLength: 1, maxLength: 8, unit: 'grapheme' }).map((s) => `'; DROP TABLE users; --${s}`);
    fc.assert(
      fc.property(attrName, fc.constantFrom(...COMPARE_OPS), marker, (name, op, text) => {
        const conditions = new Conditions();
        let sql: string;
        try {
          sql = userFilterSql({ op, attr: toAttr(name), value: text }, conditions);
        } catch (err) {
          assert.ok(err instanceof InvalidFilter, String(err));
          return;
        }
        assert.ok(!sql.includes('DROP TABLE'), sql);
        assert.ok(conditions.params.some((p) => typeof p === 'string' && p.includes('DROP TABLE')));
      }),
      { numRuns: 500 },
    );
  });
});

describe('compiled filters run on the database', () => {
  let db: Database;
  let cleanup: () => Promise<void>;

  before(async () => {
    if (DATABASE_URL) {
      const schema = uniqueName('t');
      db = await openDatabase({ databaseUrl: DATABASE_URL, databaseSchema: schema, databasePoolSize: 2, dataDir: tmpdir() });
      cleanup = async () => {
        await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await db.close();
      };
    } else {
      const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-test-'));
      db = await openDatabase({ databaseSchema: 'public', databasePoolSize: 1, dataDir });
      cleanup = async () => {
        await db.close();
        rmSync(dataDir, { recursive: true, force: true });
      };
    }
    await migrate(db);
  });

  after(async () => {
    await cleanup?.();
  });

  it('every generated filter either runs or is refused as InvalidFilter before any SQL', async () => {
    await fc.assert(
      fc.asyncProperty(tree, async (filter) => {
        try {
          await listScimUsers(db, 'org', { filter, ascending: true, offset: 0, limit: 10 });
        } catch (err) {
          assert.ok(err instanceof InvalidFilter, `${print(filter)} failed: ${String(err)}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});
