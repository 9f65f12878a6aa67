// Machine users reach the token endpoint as clients of the engine: with
// their userName and client secret (client_credentials), or, for the JWT
// profile grant, which has no client authentication, as the public client
// `machine:{userId}` that the token endpoint names on their behalf.

import type { JWT_BEARER_GRANT } from './grant-types.ts';
const JWT_PROFILE_PREFIX = 'machine:';

export function jwtProfileClientId(userId: string): string {
  return `${JWT_PROFILE_PREFIX}${userId}`;
}

export function machineUserOfJwtProfileClient(clientId: string): string | undefined {
  return clientId.startsWith(JWT_PROFILE_PREFIX) ? clientId.slice(JWT_PROFILE_PREFIX.length) || undefined : undefined;
}

export interface MachineClientSource {
  clientId: string;
  userId: string;
  orgId: string;
  accessTokenType: string | null;
  grant: 'client_credentials' | typeof JWT_BEARER_GRANT;
  secretDigest?: string;
}

export function machineClientMetadata(source: MachineClientSource): Record<string, unknown> {
  return {
    client_id: source.clientId,
    grant_types: [source.grant],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: source.secretDigest ? 'client_secret_basic' : 'none',
    ...(source.secretDigest ? { client_secret: source.secretDigest } : {}),
    access_token_type: source.accessTokenType === 'ACCESS_TOKEN_TYPE_JWT' ? 'jwt' : 'opaque',
    machine_user_id: source.userId,
    org_id: source.orgId,
    // Machine users exist to call APIs, this service's own included.
    iam_api_access: true,
  };
}
