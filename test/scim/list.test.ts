import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { USER, assertScimError, startScimWorld, type ScimWorld } from './support.ts';

// GET /Users (RFC 7644 3.4.2): every filter operator on every filterable
// attribute, and/or/not with parentheses, value filters on emails; invalid
// filters as 400 invalidFilter; paging (startIndex, count, totalResults)
// and sorting.

let w: ScimWorld;
/** Created in this order, so meta.lastModified grows along the list. */
const people = [
  { userName: 'f-alice', givenName: 'Alice', familyName: 'Ovalle', email: 'alice@alpha.test', externalId: 'EXT-1', active: true },
  { userName: 'f-bob', givenName: 'Bob', familyName: 'Bovary', email: 'bob@beta.test', externalId: 'EXT-2', active: true },
  { userName: 'f-carol', givenName: 'Carol', familyName: 'Dover', email: 'carol@beta.test', externalId: undefined, active: false },
  { userName: 'f-dave', givenName: 'Dave', familyName: 'Smith', email: 'dave_x@gamma.test', externalId: 'ext-4', active: true },
];
const lastModified: Record<string, string> = {};

async function list(query: Record<string, string>) {
  const res = await w.scim('GET', `/Users?${new URLSearchParams(query)}`);
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/scim\+json/);
  assert.deepEqual(res.body.schemas, ['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
  return res.body;
}

/** The userNames of the people the filter finds (the f- users only, whatever else the org holds). */
async function found(filter: string): Promise<string[]> {
  const body = await list({ filter: `(${filter}) and userName sw "f-"`, count: '200' });
  assert.equal(body.totalResults, body.Resources.length);
  return body.Resources.map((r: { userName: string }) => r.userName).sort();
}

before(async () => {
  w = await startScimWorld();
  for (const p of people) {
    const user = await w.create(p.userName, {
      name: { givenName: p.givenName, familyName: p.familyName },
      emails: [{ value: p.email, type: 'work', primary: true }],
      active: p.active,
      ...(p.externalId ? { externalId: p.externalId } : {}),
    });
    lastModified[p.userName] = user.meta.lastModified;
  }
  for (let i = 0; i < 25; i++) await w.create(`p-${String(i).padStart(2, '0')}`, { name: { givenName: 'Page', familyName: `Person ${24 - i}` } });
});

after(async () => {
  await w?.stop();
});

describe('filter operators (RFC 7644 3.4.2.2)', () => {
  const cases: Array<[string, string, string[]]> = [
    ['eq, without letter case on userName', 'userName eq "F-ALICE"', ['f-alice']],
    ['eq on a URN-qualified attribute', `${USER}:userName eq "f-bob"`, ['f-bob']],
    ['ne', 'userName ne "f-alice"', ['f-bob', 'f-carol', 'f-dave']],
    ['co on name.familyName', 'name.familyName co "ov"', ['f-alice', 'f-bob', 'f-carol']],
    ['sw on name.givenName', 'name.givenName sw "ca"', ['f-carol']],
    ['ew on emails.value', 'emails.value ew "@BETA.test"', ['f-bob', 'f-carol']],
    ['co with LIKE characters taken literally', 'emails.value co "_x@"', ['f-dave']],
    ['co with a % taken literally', 'emails.value co "%"', []],
    ['gt on userName', 'userName gt "f-bob"', ['f-carol', 'f-dave']],
    ['ge on userName', 'userName ge "f-bob"', ['f-bob', 'f-carol', 'f-dave']],
    ['lt on userName', 'userName lt "f-bob"', ['f-alice']],
    ['le on userName', 'userName le "f-bob"', ['f-alice', 'f-bob']],
    ['pr on externalId', 'externalId pr', ['f-alice', 'f-bob', 'f-dave']],
    ['eq on externalId is caseExact', 'externalId eq "ext-1"', []],
    ['eq on externalId', 'externalId eq "EXT-1"', ['f-alice']],
    ['sw on externalId is caseExact', 'externalId sw "EXT"', ['f-alice', 'f-bob']],
    ['eq null: absent', 'externalId eq null', ['f-carol']],
    ['ne on an absent attribute matches', 'externalId ne "EXT-1"', ['f-bob', 'f-carol', 'f-dave']],
    ['active eq false', 'active eq false', ['f-carol']],
    ['active ne false', 'active ne false', ['f-alice', 'f-bob', 'f-dave']],
    ['and binds tighter than or', 'userName eq "f-alice" or userName eq "f-bob" and active eq false', ['f-alice']],
    ['parentheses', '(userName eq "f-alice" or userName eq "f-carol") and active eq false', ['f-carol']],
    ['not', 'not (active eq true)', ['f-carol']],
    ['not of an absent attribute', 'not (externalId eq "EXT-1")', ['f-bob', 'f-carol', 'f-dave']],
    ['keywords in any letter case', 'USERNAME EQ "f-alice" OR Active Eq False', ['f-alice', 'f-carol']],
    ['value filter on emails', 'emails[type eq "work" and value ew "@alpha.test"]', ['f-alice']],
    ['value filter then sub-attribute', 'emails[type eq "work"].value sw "bob"', ['f-bob']],
    ['value filter that matches no type', 'emails[type eq "home"]', []],
    ['not around a value filter', 'not (emails[value co "beta"])', ['f-alice', 'f-dave']],
  ];
  for (const [what, filter, expected] of cases) {
    it(`${what}: ${filter}`, async () => {
      assert.deepEqual(await found(filter), expected);
    });
  }

  it('meta.lastModified with eq, ne, gt, ge, lt and le (at the millisecond shown)', async () => {
    const at = lastModified['f-bob']!;
    assert.deepEqual(await found(`meta.lastModified eq "${at}"`), ['f-bob']);
    assert.deepEqual(await found(`meta.lastModified ne "${at}"`), ['f-alice', 'f-carol', 'f-dave']);
    assert.deepEqual(await found(`meta.lastModified gt "${at}"`), ['f-carol', 'f-dave']);
    assert.deepEqual(await found(`meta.lastModified ge "${at}"`), ['f-bob', 'f-carol', 'f-dave']);
    assert.deepEqual(await found(`meta.lastModified lt "${at}"`), ['f-alice']);
    assert.deepEqual(await found(`meta.lastModified le "${at}"`), ['f-alice', 'f-bob']);
    assert.deepEqual(await found('meta.lastModified gt "2000-01-01T00:00:00+02:00"'), ['f-alice', 'f-bob', 'f-carol', 'f-dave']);
  });
});

describe('invalid filters: 400 invalidFilter', () => {
  const bad = [
    '',
    'userName',
    'userName eq',
    'userName xx "a"',
    'userName eq "unterminated',
    'userName eq unquoted',
    'favouriteColour eq "green"',
    'urn:example:other:userName eq "a"',
    'active gt true',
    'active eq "yes"',
    'userName eq 5',
    'userName gt null',
    'meta.lastModified eq "yesterday"',
    'meta.lastModified co "2020"',
    'meta.lastModified gt "0000-01-01T00:00:00Z"',
    '(userName eq "a"',
    'userName eq "a")',
    'userName eq "a" and',
    'not userName eq "a"',
    `${'('.repeat(40)}userName pr${')'.repeat(40)}`,
    Array.from({ length: 120 }, () => 'userName pr').join(' or '),
    'name[givenName eq "a"]',
    'emails[type eq "work"][value pr]',
    'emails[type eq "work"].value',
    'emails[emails[type pr]]',
    'userName eq "a\\u0000"',
    'userName eq "\\ud800"',
    'userName eq "a" userName eq "b"',
    'x'.repeat(5000),
  ];
  for (const filter of bad) {
    it(JSON.stringify(filter.slice(0, 60)), async () => {
      assertScimError(await w.scim('GET', `/Users?${new URLSearchParams({ filter })}`), 400, 'invalidFilter');
    });
  }

  it('a raw NUL or control character in the filter', async () => {
    assertScimError(await w.scim('GET', '/Users?filter=userName%20eq%20%00'), 400, 'invalidFilter');
    assertScimError(await w.scim('GET', '/Users?filter=userName%20eq%20%22a%0a%22'), 400, 'invalidFilter');
  });
});

describe('paging (RFC 7644 3.4.2.4)', () => {
  const pageFilter = 'userName sw "p-"';

  it('startIndex and count cut pages of totalResults; the last page is short', async () => {
    const first = await list({ filter: pageFilter, startIndex: '1', count: '10' });
    assert.equal(first.totalResults, 25);
    assert.equal(first.startIndex, 1);
    assert.equal(first.itemsPerPage, 10);
    assert.deepEqual(
      first.Resources.map((r: { userName: string }) => r.userName),
      Array.from({ length: 10 }, (_, i) => `p-${String(i).padStart(2, '0')}`),
    );
    const last = await list({ filter: pageFilter, startIndex: '21', count: '10' });
    assert.equal(last.totalResults, 25);
    assert.equal(last.startIndex, 21);
    assert.deepEqual(
      last.Resources.map((r: { userName: string }) => r.userName),
      ['p-20', 'p-21', 'p-22', 'p-23', 'p-24'],
    );
    const beyond = await list({ filter: pageFilter, startIndex: '100' });
    assert.equal(beyond.totalResults, 25);
    assert.equal(beyond.Resources.length, 0);
  });

  it('count 0 answers the total only; startIndex below 1 counts as 1; a negative count as 0; count is capped at maxResults', async () => {
    const counted = await list({ filter: pageFilter, count: '0' });
    assert.equal(counted.totalResults, 25);
    assert.deepEqual(counted.Resources, []);
    const zero = await list({ filter: pageFilter, startIndex: '0', count: '1' });
    assert.equal(zero.startIndex, 1);
    assert.equal(zero.Resources[0].userName, 'p-00');
    assert.equal((await list({ filter: pageFilter, count: '-5' })).Resources.length, 0);
    const all = await list({ count: '100000' });
    assert.ok(all.Resources.length <= 200);
    assert.equal(all.itemsPerPage, all.Resources.length);
  });
});

describe('sorting (RFC 7644 3.4.2.3)', () => {
  it('sortBy userName, name.familyName and meta.lastModified, ascending and descending', async () => {
    const names = async (query: Record<string, string>) =>
      (await list({ filter: 'userName sw "f-"', ...query })).Resources.map((r: { userName: string }) => r.userName);
    assert.deepEqual(await names({ sortBy: 'userName', sortOrder: 'descending' }), ['f-dave', 'f-carol', 'f-bob', 'f-alice']);
    assert.deepEqual(await names({ sortBy: 'name.familyName' }), ['f-bob', 'f-carol', 'f-alice', 'f-dave']);
    assert.deepEqual(await names({ sortBy: 'meta.lastModified', sortOrder: 'DESCENDING' }), ['f-dave', 'f-carol', 'f-bob', 'f-alice']);
    assert.deepEqual(await names({ sortBy: 'emails.value', sortOrder: 'ascending' }), ['f-alice', 'f-bob', 'f-carol', 'f-dave']);
    const pages = await list({ filter: 'userName sw "p-"', sortBy: 'name.familyName', count: '3' });
    assert.deepEqual(
      pages.Resources.map((r: { userName: string }) => r.userName),
      ['p-24', 'p-23', 'p-14'],
    );
  });

  it('sortBy an attribute that cannot be sorted on is 400', async () => {
    const res = await w.scim('GET', '/Users?sortBy=favouriteColour');
    assert.equal(res.status, 400, res.text);
  });
});
