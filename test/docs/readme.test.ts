import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { settings } from '../../config/settings.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('opens with the two commands a newcomer runs', () => {
    const start = readme.indexOf('npm install && npm start');
    const test = readme.indexOf('npm test');
    assert.ok(start > 0 && test > start, 'npm install && npm start, then npm test');
    assert.ok(start < readme.indexOf('## Configuration'));
  });

  it('documents every setting in its configuration table, with its file key', () => {
    for (const setting of settings) {
      assert.match(readme, new RegExp(`\\| \`${setting.env}\` \\| \`${setting.key}\` \\|`), `${setting.env} is missing from the table`);
    }
  });
});
