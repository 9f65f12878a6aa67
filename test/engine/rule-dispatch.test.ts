import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { rulesByEndpoint, type EngineRule } from '../../src/engine/rule-dispatch.ts';

/** A rule that notes its name on the way in and on the way out. */
function tracing(name: string, trace: string[]): EngineRule {
  return async (_ctx, next) => {
    trace.push(`${name}>`);
    await next();
    trace.push(`<${name}`);
  };
}

async function run(rule: EngineRule, path: string, trace: string[]): Promise<void> {
  await rule({ path } as KoaContextWithOIDC, async () => {
    trace.push('engine');
  });
}

describe('engine rules picked by the point their path names', () => {
  const trace: string[] = [];
  const rules = rulesByEndpoint({
    token: [tracing('a', trace), tracing('b', trace)],
    authorization: [tracing('authz', trace)],
    resume: [tracing('resume', trace)],
    end_session: [tracing('logout', trace)],
    end_session_confirm: [tracing('confirm', trace)],
    discovery: [tracing('discovery', trace)],
  });

  const cases: Array<[string, string[]]> = [
    ['/oauth/v2/token', ['a>', 'b>', 'engine', '<b', '<a']],
    ['/oauth/v2/authorize', ['authz>', 'engine', '<authz']],
    ['/oauth/v2/authorize/abc123', ['resume>', 'engine', '<resume']],
    ['/oidc/v1/end_session', ['logout>', 'engine', '<logout']],
    ['/oidc/v1/end_session/confirm', ['confirm>', 'engine', '<confirm']],
    ['/oidc/v1/end_session/success', ['engine']],
    ['/.well-known/openid-configuration', ['discovery>', 'engine', '<discovery']],
    ['/oauth/v2/introspect', ['engine']],
    ['/oauth/v2/tokenx', ['engine']],
    ['/oauth/v2/authorizex', ['engine']],
    ['/oauth/v2/token/extra', ['engine']],
    ['/', ['engine']],
  ];
  for (const [path, expected] of cases) {
    it(`${path}: ${expected.join(' ')}`, async () => {
      trace.length = 0;
      await run(rules, path, trace);
      assert.deepEqual(trace, expected);
    });
  }

  it('a rule that answers itself keeps the later rules and the engine out', async () => {
    const seen: string[] = [];
    const answering: EngineRule = async () => {
      seen.push('answered');
    };
    const chained = rulesByEndpoint({ token: [answering, tracing('later', seen)] });
    await run(chained, '/oauth/v2/token', seen);
    assert.deepEqual(seen, ['answered']);
  });
});
