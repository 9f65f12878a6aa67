import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../support/assertions.ts';
import { testServer, type TestServer } from '../support/server.ts';

// docs/api/projects-apps.md: app names are unique within a project, compared
// exactly, on create and on rename; a refused write stores nothing.

let server: TestServer;
let projectId: string;
let otherProjectId: string;

const APP = {
  redirectUris: ['https://shop.example.com/cb'],
  responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
  grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
  appType: 'OIDC_APP_TYPE_WEB',
  authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
};

const appsPath = (project: string) => `/management/v1/projects/${project}/apps`;

async function newProject(name: string): Promise<string> {
  const res = await server.api('POST', '/management/v1/projects', { body: { name } });
  assert.equal(res.status, 200, res.text);
  return res.body.id;
}

async function newApp(project: string, name: string): Promise<string> {
  const res = await server.api('POST', `${appsPath(project)}/oidc`, { body: { name, ...APP } });
  assert.equal(res.status, 200, res.text);
  return res.body.appId;
}

async function appNames(project: string): Promise<string[]> {
  const res = await server.api('POST', `${appsPath(project)}/_search`, { body: {} });
  assert.equal(res.status, 200, res.text);
  return res.body.result.map((app: { name: string }) => app.name).sort();
}

async function appCount(): Promise<number> {
  const { rows } = await server.running.db.query<{ n: string }>('SELECT count(*)::text AS n FROM apps');
  return Number(rows[0]!.n);
}

before(async () => {
  server = await testServer();
  projectId = await newProject('Shop');
  otherProjectId = await newProject('Warehouse');
});
after(async () => {
  await server?.stop();
});

describe('app names are unique within a project', () => {
  test('a second app of the same name is 409 (code 6) and not stored; another project may use the name', async () => {
    await newApp(projectId, 'Web');
    const before = await appCount();
    const again = await server.api('POST', `${appsPath(projectId)}/oidc`, { body: { name: 'Web', ...APP } });
    assertError(again, 409);
    assert.match(again.body.message, /an app named "Web" already exists in this project/);
    assert.equal(await appCount(), before, 'nothing stored');
    assert.deepEqual(await appNames(projectId), ['Web']);
    await newApp(otherProjectId, 'Web');
  });

  test('names differ by case: "web" is another name', async () => {
    await newApp(projectId, 'web');
    assert.deepEqual(await appNames(projectId), ['Web', 'web']);
  });

  test('renaming to a name another app of the project has is 409 and changes nothing; its own name is no conflict', async () => {
    const id = await newApp(projectId, 'Rename me');
    const put = (body: unknown) => server.api('PUT', `${appsPath(projectId)}/${id}`, { body });
    assertError(await put({ name: 'Web' }), 409);
    assert.deepEqual(await appNames(projectId), ['Rename me', 'Web', 'web']);
    assert.equal((await put({ name: 'Rename me', devMode: true })).status, 200, 'a change keeping its name');
    assert.equal((await put({ name: 'Renamed' })).status, 200);
    assert.deepEqual(await appNames(projectId), ['Renamed', 'Web', 'web']);
  });
});
