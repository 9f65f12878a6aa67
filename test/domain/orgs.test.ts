import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generatedDomain, normaliseDomain } from '../../src/domain/orgs.ts';

describe('generated org domain: {slug}.{instance domain}', () => {
  it('folds accents and turns runs of symbols and spaces into single dashes', () => {
    assert.equal(generatedDomain('Ärger & Co', 'example.test'), 'arger-co.example.test');
    assert.equal(generatedDomain('Crème Brûlée', 'example.test'), 'creme-brulee.example.test');
    assert.equal(generatedDomain('ACME 2024 Holding', 'example.test'), 'acme-2024-holding.example.test');
    assert.equal(generatedDomain('a -- b __ c', 'example.test'), 'a-b-c.example.test');
  });

  it('trims dashes from both ends of the slug', () => {
    assert.equal(generatedDomain('  --Hello__World!!  ', 'example.test'), 'hello-world.example.test');
    assert.equal(generatedDomain('(ACME)', 'example.test'), 'acme.example.test');
  });

  it("a name with nothing usable becomes 'org'", () => {
    assert.equal(generatedDomain('', 'example.test'), 'org.example.test');
    assert.equal(generatedDomain('!!! ???', 'example.test'), 'org.example.test');
    assert.equal(generatedDomain('日本', 'example.test'), 'org.example.test');
  });

  it('keeps the slug a valid DNS label: at most 63 characters and no trailing dash after the cut', () => {
    assert.equal(generatedDomain('a'.repeat(100), 'x.test'), `${'a'.repeat(63)}.x.test`);
    assert.equal(generatedDomain(`${'a'.repeat(62)} b`, 'x.test'), `${'a'.repeat(62)}.x.test`);
    const slug = generatedDomain('Ü'.repeat(300), 'x.test').split('.')[0]!;
    assert.match(slug, /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/);
  });

  it('uses the instance domain as given', () => {
    assert.equal(generatedDomain('ACME', '127.0.0.1'), 'acme.127.0.0.1');
    assert.equal(generatedDomain('ACME', 'localhost'), 'acme.localhost');
  });
});

describe('normalised org domain', () => {
  it('is lowercase, trimmed and without a trailing dot', () => {
    assert.equal(normaliseDomain('ACME.Example.COM'), 'acme.example.com');
    assert.equal(normaliseDomain(' acme.example.com. '), 'acme.example.com');
    assert.equal(normaliseDomain('acme.example.com'), 'acme.example.com');
  });
});
