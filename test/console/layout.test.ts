import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { landedOn, needsChromium, signIn } from '../support/browser.ts';
import { eventually } from '../support/tokens.ts';
import { assertAccessible, assertNoSideScroll, CONSOLE_ADMIN, DESKTOP, PHONE, shoot, startConsoleScene, watch, type ConsoleScene } from '../support/console.ts';

// The console's frame on every page: the org in the address (a bookmark
// opens the same page in the same org, an address of the older console
// moves into an org), every page at 1366 and at 390 px without sideways
// scrolling, in the system's light and dark mode, each without a serious
// or critical axe-core violation. Screenshots of each under test-results/.

describe('the console on every screen', { skip: needsChromium }, () => {
  let scene: ConsoleScene;
  let acme: string;
  let rockets: string;
  let appId: string;
  let userId: string;
  let samlAppId: string;
  const PAGES = [
    'users',
    'user',
    'projects',
    'project',
    'apps',
    'app',
    'members',
    'policies',
    'org',
    'signing-keys',
    'events',
    'notifications',
    'message-texts',
    'idps',
    'scim',
    'actions',
    'saml-app',
  ] as const;
  const pathOf = (name: (typeof PAGES)[number]): string =>
    ({
      users: 'users',
      user: `users/${userId}`,
      projects: 'projects',
      project: `projects/${rockets}`,
      apps: `apps?project=${rockets}`,
      app: `projects/${rockets}/apps/${appId}`,
      members: 'members',
      policies: 'policies',
      org: 'org',
      'signing-keys': 'signing-keys',
      events: 'events',
      notifications: 'notifications',
      'message-texts': 'message-texts',
      idps: 'idps',
      scim: 'scim',
      actions: 'actions',
      'saml-app': `projects/${rockets}/apps/${samlAppId}`,
    })[name];

  before(async () => {
    scene = await startConsoleScene();
    const setup = await scene.admin('POST', '/admin/v1/orgs/_setup', {
      body: {
        org: { name: 'ACME', domain: 'acme.example.test' },
        human: {
          userName: 'wilhelmina-the-very-long-named-user',
          profile: { firstName: 'Wilhelmina', lastName: 'Featherstonehaugh-Cholmondeley' },
          email: { email: 'wilhelmina-the-very-long-named-user@acme.example.test' },
          password: 'Wilhelmina-Passw0rd',
        },
      },
    });
    assert.equal(setup.status, 200, setup.text);
    acme = setup.body.orgId;
    userId = setup.body.userId;
    const inAcme = (method: string, path: string, body: unknown) => scene.admin(method, path, { body, orgId: acme });
    const project = await inAcme('POST', '/management/v1/projects', { name: 'Rockets' });
    rockets = project.body.id;
    await inAcme('POST', `/management/v1/projects/${rockets}/roles`, { roleKey: 'launch.director.with.a.long.key', displayName: 'Launch director' });
    const app = await inAcme('POST', `/management/v1/projects/${rockets}/apps/oidc`, {
      name: 'Mission control',
      redirectUris: ['https://mission-control.acme.example.test/callback'],
    });
    assert.equal(app.status, 200, app.text);
    appId = app.body.appId;
    await inAcme('POST', `/management/v1/users/${userId}/grants`, { projectId: rockets, roleKeys: ['launch.director.with.a.long.key'] });
    // Integrations: a provider of the org on its login page, an action target with an execution, a SAML app with long addresses.
    const idp = await inAcme('POST', '/management/v1/idps/google', {
      name: 'Google Workspace of ACME',
      clientId: 'acme.apps.googleusercontent.com',
      clientSecret: 's3cret',
    });
    assert.equal(idp.status, 200, idp.text);
    await inAcme('POST', '/management/v1/policies/login/idps', { idpId: idp.body.id });
    const target = await scene.admin('POST', '/v2beta/actions/targets', {
      body: {
        name: 'mission-control-sync',
        endpoint: 'https://hooks.mission-control.acme.example.test/portcullis/events/with/a/long/path',
        timeout: '10s',
        restAsync: {},
      },
    });
    assert.equal(target.status, 200, target.text);
    await scene.admin('PUT', '/v2beta/actions/executions', { body: { condition: { event: { group: 'user.human' } }, targets: [{ target: target.body.id }] } });
    const sp = 'https://telemetry-dashboard.mission-control.acme.example.test/saml/service-provider';
    const metadata = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${sp}/metadata"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${sp}/assertion-consumer" index="0"/></md:SPSSODescriptor></md:EntityDescriptor>`;
    const saml = await inAcme('POST', `/management/v1/projects/${rockets}/apps/saml`, {
      name: 'Telemetry',
      metadataXml: Buffer.from(metadata).toString('base64'),
    });
    assert.equal(saml.status, 200, saml.text);
    samlAppId = saml.body.appId;
  });
  after(() => scene?.stop());

  /** Opens a page of ACME and waits until it has loaded all it shows. */
  async function open(page: Page, path: string): Promise<void> {
    await page.goto(`${scene.consoleUrl}orgs/${acme}/${path}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    const loaded = await eventually(async () => (await page.getByText('Loading…').count()) === 0, 10_000, 50);
    assert.ok(loaded, `${path} finished loading`);
  }

  it('opens a bookmarked page of another org in that org, through the sign-in', async () => {
    const context = await scene.browser.newContext({ locale: 'en-US' });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    watch(page, scene.problems);
    // A new browser has no session: the bookmark goes through the login and comes back to itself.
    await page.goto(`${scene.consoleUrl}orgs/${acme}/projects/${rockets}`);
    await landedOn(page, `${scene.server.issuer}/ui/login`);
    await signIn(page, CONSOLE_ADMIN);
    await page.getByRole('heading', { level: 1, name: 'Rockets' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/ui/console/orgs/${acme}/projects/${rockets}`);
    assert.equal(await page.getByLabel('Organization').locator('option:checked').innerText(), 'ACME');
    // Links of the page stay in its org.
    assert.equal(await page.getByRole('link', { name: 'Apps of this project' }).getAttribute('href'), `/ui/console/orgs/${acme}/apps?project=${rockets}`);
    await context.close();
  });

  it('moves an address without an org (the older console) into the org the tab used last', async () => {
    const { context, page } = await scene.signedInPage();
    await open(page, 'users');
    await page.goto(`${scene.consoleUrl}projects/${rockets}`);
    await page.getByRole('heading', { level: 1, name: 'Rockets' }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/ui/console/orgs/${acme}/projects/${rockets}`);
    // Switching the org goes to the same section in the other org.
    await page.getByLabel('Organization').selectOption({ label: 'Default' });
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    assert.match(new URL(page.url()).pathname, /^\/ui\/console\/orgs\/[A-Za-z0-9_-]+\/projects$/);
    assert.notEqual(new URL(page.url()).pathname, `/ui/console/orgs/${acme}/projects`);
    await context.close();
  });

  // One signed-in tab per mode, each page a test of its own (axe-core takes seconds a run).
  for (const scheme of ['light', 'dark'] as const) {
    describe(`in ${scheme} mode`, () => {
      let page: Page;
      before(async () => {
        ({ page } = await scene.signedInPage({ colorScheme: scheme }));
      });

      it(`has the ${scheme} background`, async () => {
        const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
        assert.equal(background, scheme === 'dark' ? 'rgb(18, 22, 31)' : 'rgb(255, 255, 255)');
      });

      for (const name of PAGES) {
        it(`shows ${name} at 1366 and 390 px, accessible and without sideways scrolling`, async () => {
          const path = pathOf(name);
          // axe-core once per page and mode: light at the desktop width, dark at the phone's.
          await page.setViewportSize(DESKTOP);
          await open(page, path);
          if (scheme === 'light') await assertAccessible(page, `${name} (${scheme}, 1366 px)`);
          await shoot(page, `${name}-1366-${scheme}`);
          await page.setViewportSize(PHONE);
          await open(page, path);
          await assertNoSideScroll(page, `${name} (${scheme}, 390 px)`);
          if (scheme === 'dark') await assertAccessible(page, `${name} (${scheme}, 390 px)`);
          await shoot(page, `${name}-390-${scheme}`);
        });
      }
    });
  }

  it("keeps the German login's Weiter button on the line of the registration link at 390 px", async () => {
    const context = await scene.browser.newContext({ locale: 'de-DE', viewport: PHONE });
    try {
      const page = await context.newPage();
      await page.goto(scene.consoleUrl);
      const next = page.getByRole('button', { name: 'Weiter', exact: true });
      const register = page.getByRole('link', { name: 'Noch kein Konto? Registrieren' });
      const [button, link] = [await next.boundingBox(), await register.boundingBox()];
      assert.ok(button && link);
      assert.ok(button.y < link.y + link.height && link.y < button.y + button.height, `button at ${button.y}, link at ${link.y}–${link.y + link.height}`);
      assert.ok(button.x > link.x, 'the button to the right of the link');
      await assertNoSideScroll(page, 'login (de, 390 px)');
      await shoot(page, 'login-390-de');
    } finally {
      await context.close();
    }
  });

  it('showed every page without a script error or CSP refusal', () => {
    assert.deepEqual(scene.problems, []);
  });
});
