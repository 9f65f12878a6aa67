import { createServer } from 'node:http';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider, { type Configuration } from 'oidc-provider';
import { ROUTES } from '../src/engine/routes.ts';

// The bare engine the benchmark compares us with: `oidc-provider` alone,
// its default in-memory adapter, the same paths and the same machine
// clients (client_id and secret) as our server, nothing of ours. Started by
// bench/run.ts as a child process:
//
//   BARE_PORT=…  BARE_CLIENTS='[{"client_id":"…","client_secret":"…","jwt":false}]'  node bench/bare-provider.ts
//
// A client with `jwt: true` gets JWT access tokens from client_credentials
// (through a default resource server whose format is jwt, the engine's way).

interface BareClient {
  client_id: string;
  client_secret: string;
  jwt?: boolean;
}

const port = Number(process.env.BARE_PORT);
if (!Number.isInteger(port) || port <= 0) {
  process.stderr.write('bare-provider: BARE_PORT is required\n');
  process.exit(2);
}
const clients = JSON.parse(process.env.BARE_CLIENTS ?? '[]') as BareClient[];
const issuer = `http://127.0.0.1:${port}`;
const jwtClients = new Set(clients.filter((c) => c.jwt).map((c) => c.client_id));
const JWT_RESOURCE = 'urn:bench:jwt-access-tokens';

// One RS256 key, as our server signs with (the engine's built-in dev keys
// would print a warning and are not what a deployment uses).
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'RS256', use: 'sig' };

const configuration: Configuration = {
  clients: clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  jwks: { keys: [jwk as never] },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  // The same paths as ours, so the load generator sends identical requests.
  routes: ROUTES,
  scopes: ['openid', 'profile', 'email', 'offline_access'],
  ttl: { ClientCredentials: 43200, AccessToken: 43200 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: jwtClients.size > 0,
      defaultResource: (_ctx, client) => (client && jwtClients.has(client.clientId) ? JWT_RESOURCE : undefined) as string,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({ scope: 'openid', accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
    },
  },
};

const provider = new Provider(issuer, configuration);
provider.on('server_error', (_ctx, err) => process.stderr.write(`bare-provider server_error: ${err.stack ?? err}\n`));

const server = createServer(provider.callback());
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`bare oidc-provider listening on ${issuer}\n`));

const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
