import { readFileSync } from 'node:fs';
import { UsageError, type Options, type Values } from './args.ts';
import type { Command } from './command.ts';
import { CliError } from './cli-error.ts';
import { limitOf, listCommand, table } from './list-commands.ts';
import { list, mapped, str } from './option-values.ts';
import { secretLines } from './output.ts';
import { FUNCTION_NAMES } from '../src/domain/actions.ts';
import { IDP_KINDS, kindOfType } from '../src/domain/idps.ts';

// The commands of what the service connects to: identity providers of the
// org or the instance (docs/api/idps.md), the login policy's list of them,
// the instance's action targets and executions (docs/api/actions.md), and
// SAML apps of a project (docs/api/saml-apps.md).

const id = (value: string) => encodeURIComponent(value);
type Row = Record<string, any>;

const INSTANCE: Options = { instance: { type: 'boolean', description: "the instance's (needs IAM_OWNER) rather than the org's (needs ORG_OWNER)" } };
const IDP: Options = { idp: { type: 'string', arg: '<idpId>', description: 'identity provider id' } };
const TARGET: Options = { target: { type: 'string', arg: '<targetId>', description: 'target id' } };
const LIMIT: Options = { limit: { type: 'string', arg: '<n>', description: 'at most <n> rows, 1 to 1000 (default 100)' } };

const prefix = (values: Values) => (values.instance === true ? '/admin/v1' : '/management/v1');
const where = (values: Values) => (values.instance === true ? 'the instance' : 'the org');
const kindName = (type: unknown) => kindOfType(String(type))?.name ?? String(type ?? '');
const owner = (type: unknown) => (type === 'IDP_OWNER_TYPE_ORG' ? 'org' : 'instance');

/** The body of create-idp: a JSON object read from a file, so the client secret never stands on a command line. */
function idpBody(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${path} is not JSON: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new CliError(`${path} must hold one JSON object (the provider's body)`);
  return body as Record<string, unknown>;
}

/** A file's bytes as base64 (an SP's metadata document, sent as the API takes it). */
function fileBase64(path: string): string {
  try {
    return readFileSync(path).toString('base64');
  } catch (err) {
    throw new CliError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** A search of the actions API: it pages but takes no filters. */
function actionList(name: string, summary: string, path: string, [one, what]: [string, string], columns: Array<[string, (row: Row) => string]>): Command {
  return {
    name,
    summary,
    options: LIMIT,
    required: [],
    request: (values) => ({ method: 'POST', path, body: { query: { offset: '0', limit: limitOf(name, values), asc: true } } }),
    describe(response) {
      const rows: Row[] = Array.isArray(response.result) ? response.result : [];
      const total = Number(response.details?.totalResult ?? rows.length);
      if (!rows.length) return [`No ${what}.`];
      return [...table(columns, rows), rows.length < total ? `${rows.length} of ${total} ${what} (raise --limit)` : `${total} ${total === 1 ? one : what}`];
    },
  };
}

/** `{event: {group: "user"}}` → `group user`: a condition as a short line. */
function conditionText(condition: Row | undefined): string {
  if (condition?.function) return `function ${condition.function.name}`;
  const event = condition?.event ?? {};
  if (event.event !== undefined) return `event ${event.event}`;
  if (event.group !== undefined) return `group ${event.group}`;
  return 'all events';
}

/** The condition of set-execution: exactly one of --event, --group, --all, --function. */
function conditionOf(values: Values): Record<string, unknown> {
  const given = ['event', 'group', 'all', 'function'].filter((option) => values[option] !== undefined);
  if (given.length !== 1) throw new UsageError('give exactly one of --event, --group, --all, --function', 'set-execution');
  const functions = Object.fromEntries(FUNCTION_NAMES.map((name) => [name, name]));
  if (values.function !== undefined) return { function: { name: mapped('set-execution', 'function', str(values, 'function')!, functions) } };
  if (values.all === true) return { event: { all: true } };
  return { event: values.event !== undefined ? { event: str(values, 'event') } : { group: str(values, 'group') } };
}

const TARGET_TYPES = { webhook: 'restWebhook', call: 'restCall', async: 'restAsync' };

export const INTEGRATION_COMMANDS: Command[] = [
  listCommand({
    name: 'list-idps',
    summary: "list the identity providers of the org (its own and the instance's) or with --instance the instance's",
    what: 'identity providers',
    one: 'identity provider',
    options: INSTANCE,
    path: (values) => `${prefix(values)}/idps/_search`,
    nameQuery: (text) => ({ nameQuery: { name: text, method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } }),
    columns: [
      ['ID', (r) => String(r.id)],
      ['KIND', (r) => kindName(r.type)],
      ['OWNER', (r) => owner(r.owner)],
      ['NAME', (r) => String(r.name)],
    ],
  }),
  {
    name: 'get-idp',
    summary: 'show an identity provider (never its client secret)',
    options: { ...IDP, ...INSTANCE },
    required: ['idp'],
    request: (values) => ({ method: 'GET', path: `${prefix(values)}/idps/${id(str(values, 'idp')!)}` }),
    describe: ({ idp = {} }) => [
      `${idp.name} (${kindName(idp.type)}, ${owner(idp.owner)}, idpId ${idp.id})`,
      ...Object.entries(idp.config ?? {}).map(([field, value]) => `${field}: ${Array.isArray(value) ? value.join(' ') : String(value)}`),
      ...Object.entries(idp.providerOptions ?? {}).map(([option, value]) => `${option}: ${String(value)}`),
    ],
  },
  {
    name: 'create-idp',
    summary: 'create an identity provider from a JSON file holding its body (docs/api/idps.md)',
    options: {
      kind: { type: 'string', arg: '<kind>', description: `${[...IDP_KINDS.keys()].join(', ')}` },
      file: { type: 'string', arg: '<file>', description: "JSON file with the body: name, the kind's fields (clientSecret too), providerOptions" },
      ...INSTANCE,
    },
    required: ['kind', 'file'],
    request(values) {
      const kinds = Object.fromEntries([...IDP_KINDS.keys()].map((name) => [name, name]));
      const kind = mapped('create-idp', 'kind', str(values, 'kind')!, kinds);
      return { method: 'POST', path: `${prefix(values)}/idps/${kind}`, body: idpBody(str(values, 'file')!) };
    },
    describe: (r, v) => [`Created identity provider ${r.id} in ${where(v)}`],
  },
  {
    name: 'remove-idp',
    summary: "remove an identity provider, its users' links and its place on every login page",
    options: { ...IDP, ...INSTANCE },
    required: ['idp'],
    request: (values) => ({ method: 'DELETE', path: `${prefix(values)}/idps/${id(str(values, 'idp')!)}` }),
    describe: (_r, v) => [`Removed identity provider ${str(v, 'idp')}`],
  },
  {
    name: 'login-idps',
    summary: "list the providers on the org's login page (or with --instance the instance default's)",
    options: INSTANCE,
    required: [],
    request: (values) => ({ method: 'POST', path: `${prefix(values)}/policies/login/idps/_search`, body: {} }),
    describe(response) {
      const rows: Row[] = Array.isArray(response.result) ? response.result : [];
      if (!rows.length) return ['No identity providers on the login page.'];
      const columns: Array<[string, (row: Row) => string]> = [
        ['ID', (r) => String(r.idpId)],
        ['KIND', (r) => kindName(r.idpType)],
        ['OWNER', (r) => owner(r.ownerType)],
        ['NAME', (r) => String(r.idpName)],
      ];
      return [...table(columns, rows), `${rows.length} on the login page`];
    },
  },
  {
    name: 'add-login-idp',
    summary: "put a provider on the org's login page (or with --instance the instance default's); an org following the default gets its own copy first",
    options: { ...IDP, ...INSTANCE },
    required: ['idp'],
    request: (values) => ({ method: 'POST', path: `${prefix(values)}/policies/login/idps`, body: { idpId: str(values, 'idp') } }),
    describe: (_r, v) => [`Identity provider ${str(v, 'idp')} is on the login page of ${where(v)}`],
  },
  {
    name: 'remove-login-idp',
    summary: "take a provider off the org's login page (or with --instance the instance default's)",
    options: { ...IDP, ...INSTANCE },
    required: ['idp'],
    request: (values) => ({ method: 'DELETE', path: `${prefix(values)}/policies/login/idps/${id(str(values, 'idp')!)}` }),
    describe: (_r, v) => [`Identity provider ${str(v, 'idp')} is off the login page of ${where(v)}`],
  },
  actionList(
    'list-targets',
    'list the action targets of the instance (needs IAM_OWNER)',
    '/v2beta/actions/targets/_search',
    ['target', 'targets'],
    [
      ['ID', (r) => String(r.id)],
      ['TYPE', (r) => Object.entries(TARGET_TYPES).find(([, field]) => r[field] !== undefined)?.[0] ?? ''],
      ['TIMEOUT', (r) => String(r.timeout)],
      ['NAME', (r) => String(r.name)],
      ['ENDPOINT', (r) => String(r.endpoint)],
    ],
  ),
  {
    name: 'add-target',
    summary: 'create an action target; its signing key is shown once (needs IAM_OWNER)',
    options: {
      name: { type: 'string', arg: '<name>', description: 'unique name' },
      endpoint: { type: 'string', arg: '<url>', description: 'https URL the service calls' },
      timeout: { type: 'string', arg: '<duration>', description: 'from 0.1s to 30s (default 10s)' },
      type: { type: 'string', arg: '<type>', description: 'webhook (default), call (token hooks need it) or async' },
      'interrupt-on-error': { type: 'boolean', description: 'a failed call fails the request (webhook and call)' },
    },
    required: ['name', 'endpoint'],
    request(values) {
      const type = mapped('add-target', 'type', str(values, 'type') ?? 'webhook', TARGET_TYPES);
      const interrupt = values['interrupt-on-error'] === true;
      if (type === 'restAsync' && interrupt) throw new UsageError('--interrupt-on-error needs --type webhook or call', 'add-target');
      return {
        method: 'POST',
        path: '/v2beta/actions/targets',
        body: {
          name: str(values, 'name'),
          endpoint: str(values, 'endpoint'),
          timeout: str(values, 'timeout') ?? '10s',
          [type]: type === 'restAsync' ? {} : { interruptOnError: interrupt },
        },
      };
    },
    describe: (r, v) => [`Created target ${str(v, 'name')} (targetId ${r.id})`, ...secretLines('Signing key', String(r.signingKey))],
  },
  {
    name: 'remove-target',
    summary: 'remove an action target, its delivery state and its place in every execution (needs IAM_OWNER)',
    options: TARGET,
    required: ['target'],
    request: (values) => ({ method: 'DELETE', path: `/v2beta/actions/targets/${id(str(values, 'target')!)}` }),
    describe: (_r, v) => [`Removed target ${str(v, 'target')}`],
  },
  {
    name: 'target-state',
    summary: "show where a target's event deliveries stand (needs IAM_OWNER)",
    options: TARGET,
    required: ['target'],
    request: (values) => ({ method: 'GET', path: `/v2beta/actions/targets/${id(str(values, 'target')!)}/state` }),
    describe: (r) => [`delivered up to event: ${r.sequence}`, `failed attempts at the next: ${r.failures}`, `last error: ${r.lastError ?? 'none'}`],
  },
  actionList(
    'list-executions',
    'list the executions of the instance: which condition calls which targets (needs IAM_OWNER)',
    '/v2beta/actions/executions/_search',
    ['execution', 'executions'],
    [
      ['CONDITION', (r) => conditionText(r.condition)],
      ['TARGETS', (r) => (Array.isArray(r.targets) ? r.targets.map((t: Row) => String(t.target)).join(',') : '')],
    ],
  ),
  {
    name: 'set-execution',
    summary: 'set which targets a condition calls, in order, or --remove the execution (needs IAM_OWNER)',
    options: {
      event: { type: 'string', arg: '<type>', description: 'one event type, e.g. user.human.added' },
      group: { type: 'string', arg: '<group>', description: 'a group of event types, e.g. user' },
      all: { type: 'boolean', description: 'every event' },
      function: { type: 'string', arg: '<name>', description: FUNCTION_NAMES.join(', ') },
      target: { type: 'string', multiple: true, arg: '<targetId>', description: 'target to call, repeatable, in calling order' },
      remove: { type: 'boolean', description: 'remove the execution of the condition' },
    },
    required: [],
    request(values) {
      const condition = conditionOf(values);
      const targets = list(values, 'target');
      if (values.remove === true && targets.length) throw new UsageError('give --target or --remove, not both', 'set-execution');
      if (values.remove !== true && !targets.length) throw new UsageError('give at least one --target, or --remove', 'set-execution');
      return { method: 'PUT', path: '/v2beta/actions/executions', body: { condition, targets: targets.map((target) => ({ target })) } };
    },
    describe: (_r, v) => (v.remove === true ? ['Removed the execution.'] : [`The execution calls ${list(v, 'target').join(', ')}, in this order`]),
  },
  {
    name: 'add-saml-app',
    summary: "create a SAML app in a project from its SP's metadata, a file or a URL (needs ORG_OWNER)",
    options: {
      project: { type: 'string', arg: '<projectId>', description: 'project id' },
      name: { type: 'string', arg: '<name>', description: 'app name' },
      'metadata-file': { type: 'string', arg: '<file>', description: "the SP's metadata XML" },
      'metadata-url': { type: 'string', arg: '<url>', description: "where the service fetches the SP's metadata" },
      'idp-initiated': { type: 'boolean', description: 'allow sign-ins started at /saml/v2/init (docs/saml.md)' },
    },
    required: ['project', 'name'],
    request(values) {
      const file = str(values, 'metadata-file');
      const url = str(values, 'metadata-url');
      if ((file === undefined) === (url === undefined)) throw new UsageError('give exactly one of --metadata-file and --metadata-url', 'add-saml-app');
      const body: Record<string, unknown> = { name: str(values, 'name'), ...(file !== undefined ? { metadataXml: fileBase64(file) } : { metadataUrl: url }) };
      if (values['idp-initiated'] === true) body.allowIdpInitiated = true;
      return { method: 'POST', path: `/management/v1/projects/${id(str(values, 'project')!)}/apps/saml`, body };
    },
    describe: (r, v) => [`Created SAML app ${str(v, 'name')} (appId ${r.appId}); the SP takes this service's IdP metadata from {ISSUER}/saml/v2/metadata`],
  },
];
