import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Database } from '../storage/database.ts';
import { beginWrite } from '../storage/event-log.ts';
import { addOrg } from '../storage/orgs.ts';
import { addMachine } from '../storage/users.ts';
import { addMembership } from '../storage/memberships.ts';
import { addMachineKey, addPersonalAccessToken } from '../storage/credentials.ts';
import { addInstance, findInstance } from '../storage/instance.ts';
import { newId } from '../domain/ids.ts';
import { generatedDomain } from '../domain/orgs.ts';
import { loginName } from '../domain/users.ts';
import { generateSecret, secretDigest } from '../security/secrets.ts';
import { generateMachineKeyPair, serviceAccountKeyFile } from '../security/machine-keys.ts';
import { prepareHuman, writeHuman, type HumanInput, type OrgSettings } from './setup-org.ts';
import { lockForTransaction } from '../storage/advisory-lock.ts';

export interface FirstStartSettings extends OrgSettings {
  instanceOrgName: string;
  adminPassword?: string;
  dataDir: string;
  /** Key of the keyed digests of generated secrets (PATs). */
  secretKey: Buffer;
}

export interface FirstStartResult {
  adminLoginName: string;
  files: { pat: string; key: string; password?: string };
}

export const ADMIN_USER_NAME = 'admin';
export const ADMIN_MACHINE_USER_NAME = 'portcullis-admin';

function writeSecretFile(path: string, content: string): void {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/**
 * docs/operations.md, First start: on an empty database, the instance, its
 * first org, an admin human and an admin machine user (both IAM_OWNER), the
 * machine user's PAT and JSON key. Serialised by an advisory lock, so nodes
 * starting together create it once; returns undefined when the instance
 * already exists. The credential files are written before the transaction
 * commits: if they cannot be written, nothing is created and the next start
 * tries again.
 */
export async function firstStart(db: Database, settings: FirstStartSettings): Promise<FirstStartResult | undefined> {
  return db.transaction(async (tx) => {
    await lockForTransaction(tx, 'first_start');
    if (await findInstance(tx)) return undefined;

    const orgId = newId();
    const domain = generatedDomain(settings.instanceOrgName, settings.instanceDomain);
    const password = settings.adminPassword ?? generateSecret(18);
    const admin: HumanInput = {
      userName: ADMIN_USER_NAME,
      profile: { firstName: 'Instance', lastName: 'Admin' },
      email: { email: `${ADMIN_USER_NAME}@${domain}`, isEmailVerified: true },
      password,
    };
    const { passwordHash } = await prepareHuman(admin, settings.passwordComplexity.defaults, 'ADMIN_PASSWORD');
    const humanId = newId();
    const machineId = newId();
    const keyId = newId();
    const pat = generateSecret();
    const keyPair = await generateMachineKeyPair(keyId);

    const write = await beginWrite(tx, null);
    await addOrg(write, { id: orgId, name: settings.instanceOrgName, domain });
    await writeHuman(write, admin, { userId: humanId, orgId }, passwordHash);
    await addMembership(write, { userId: humanId, scope: 'org', scopeId: orgId, roles: ['ORG_OWNER'], resourceOwner: orgId });
    await addMachine(write, {
      id: machineId,
      orgId,
      userName: ADMIN_MACHINE_USER_NAME,
      name: 'Portcullis admin',
      description: 'Created on first start',
      accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER',
    });
    await addPersonalAccessToken(write, { id: newId(), userId: machineId, orgId, digest: secretDigest(settings.secretKey, pat), expiresAt: null });
    await addMachineKey(write, { id: keyId, userId: machineId, orgId, publicJwk: keyPair.publicJwk, expiresAt: null });
    const instanceId = newId();
    await addInstance(write, { id: instanceId, defaultOrgId: orgId });
    for (const userId of [humanId, machineId]) {
      await addMembership(write, { userId, scope: 'instance', scopeId: instanceId, roles: ['IAM_OWNER'], resourceOwner: orgId });
    }

    const dir = resolve(settings.dataDir);
    mkdirSync(dir, { recursive: true });
    const files: FirstStartResult['files'] = { pat: join(dir, 'admin.pat'), key: join(dir, 'admin-key.json') };
    writeSecretFile(files.pat, `${pat}\n`);
    writeSecretFile(files.key, serviceAccountKeyFile(keyId, machineId, keyPair.privatePem));
    if (!settings.adminPassword) {
      files.password = join(dir, 'admin.password');
      writeSecretFile(files.password, `${password}\n`);
    }
    return { adminLoginName: loginName(ADMIN_USER_NAME, domain), files };
  });
}
