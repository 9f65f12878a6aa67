import type { Context } from 'koa';
import type { Logger } from '../logger.ts';
import type { Principal } from '../domain/roles.ts';
import { NotFound, PayloadTooLarge } from '../domain/errors.ts';
import { ScimInvalid } from '../domain/scim/errors.ts';
import { etagOf } from '../domain/scim/etag.ts';
import type { StoredScimUser } from '../domain/scim/user.ts';
import { validator } from '../admin/validate.ts';
import { scimErrorOf, SCIM_CONTENT_TYPE, type ScimErrorBody } from './errors.ts';
import { canonicalFields } from './body.ts';
import { MAX_BULK_OPERATIONS } from './discovery.ts';
import { preconditionOf, type UserWrites } from './user-writes.ts';

// `POST /Bulk` (RFC 7644 3.7): many User writes in one request. Each
// operation is the write its method and path name, in its own transaction
// (RFC 7644 3.7 does not make a bulk request atomic), in the order given;
// a POST's `bulkId` stands for the created user's id in the paths and
// data of the operations after it.

const BULK_REQUEST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
const BULK_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:BulkResponse';

const REQUEST_FIELDS = ['schemas', 'failOnErrors', 'Operations'];
const OPERATION_FIELDS = ['method', 'bulkId', 'version', 'path', 'data'];
const BULK_ID = /^bulkId:(.+)$/;
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

interface BulkOperation {
  method: string;
  bulkId?: string;
  version?: string;
  path: string;
  data?: unknown;
}

interface BulkRequest {
  schemas: string[];
  failOnErrors?: number;
  Operations: Record<string, unknown>[];
}

const checkRequest = validator<BulkRequest>({
  type: 'object',
  required: ['schemas', 'Operations'],
  properties: {
    schemas: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 200 } },
    failOnErrors: { type: 'integer', minimum: 1 },
    Operations: { type: 'array', minItems: 1, items: { type: 'object' } },
  },
});

const checkOperation = validator<BulkOperation>({
  type: 'object',
  required: ['method', 'path'],
  properties: {
    method: { type: 'string', maxLength: 10 },
    bulkId: { type: 'string', minLength: 1, maxLength: 200 },
    version: { type: 'string', maxLength: 4096 },
    path: { type: 'string', minLength: 1, maxLength: 300 },
    data: {},
  },
});

/** The operations of a request, checked as a whole before any runs: a request that cannot be read writes nothing. */
function operationsOf(body: unknown): { operations: BulkOperation[]; failOnErrors: number | undefined } {
  const fields = canonicalFields(body, REQUEST_FIELDS, 'BulkRequest');
  // RFC 7644 3.7.4: more operations than maxOperations is 413.
  if (Array.isArray(fields.Operations) && fields.Operations.length > MAX_BULK_OPERATIONS)
    throw new PayloadTooLarge(`a bulk request holds at most ${MAX_BULK_OPERATIONS} operations`);
  const request = checkRequest(fields);
  if (!request.schemas.some((uri) => uri.toLowerCase() === BULK_REQUEST_SCHEMA.toLowerCase()))
    throw new ScimInvalid('invalidSyntax', `"schemas" must list ${BULK_REQUEST_SCHEMA}`);
  const bulkIds = new Set<string>();
  const operations = request.Operations.map((item, index) => {
    const operation = checkOperation(canonicalFields(item, OPERATION_FIELDS, 'bulk operation'));
    const method = operation.method.toUpperCase();
    if (!METHODS.includes(method)) throw new ScimInvalid('invalidValue', `Operations[${index}].method must be POST, PUT, PATCH or DELETE`);
    if (method === 'POST' && operation.bulkId === undefined) throw new ScimInvalid('invalidValue', `Operations[${index}]: a POST needs a bulkId`);
    if (method !== 'DELETE' && operation.data === undefined) throw new ScimInvalid('invalidValue', `Operations[${index}]: a ${method} needs data`);
    if (operation.bulkId !== undefined) {
      if (bulkIds.has(operation.bulkId))
        throw new ScimInvalid('invalidValue', `Operations[${index}]: bulkId "${operation.bulkId.slice(0, 60)}" is given twice`);
      bulkIds.add(operation.bulkId);
    }
    return { ...operation, method };
  });
  return { operations, failOnErrors: request.failOnErrors };
}

/** Every "bulkId:x" string in the data replaced by the id of the user that operation x created. */
function resolved(value: unknown, created: Map<string, string>): unknown {
  if (typeof value === 'string') {
    const bulkId = BULK_ID.exec(value)?.[1];
    if (bulkId === undefined) return value;
    const id = created.get(bulkId);
    if (id === undefined) throw new ScimInvalid('invalidValue', `"${value.slice(0, 60)}" names no user created by an earlier operation of this request`);
    return id;
  }
  if (Array.isArray(value)) return value.map((item) => resolved(item, created));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolved(item, created)]));
  return value;
}

/** The user id a path names: `/Users/{id}` or `/Users/bulkId:x`. */
function userIdOf(path: string, created: Map<string, string>): string {
  const match = /^\/Users\/([^/]+)$/i.exec(path);
  if (!match) throw new NotFound(`no User at ${path.slice(0, 100)}: a bulk operation's path is /Users or /Users/{id}`);
  const id = resolved(match[1]!, created) as string;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new NotFound(`no User ${id.slice(0, 64)}`);
  return id;
}

interface OperationResult {
  method: string;
  bulkId?: string;
  location?: string;
  version?: string;
  status: string;
  response?: ScimErrorBody;
}

async function run(
  writes: UserWrites,
  actor: Principal,
  orgId: string,
  operation: BulkOperation,
  created: Map<string, string>,
): Promise<{ user?: StoredScimUser; status: number }> {
  const precondition = preconditionOf(operation.version);
  const data = resolved(operation.data, created);
  if (operation.method === 'POST') {
    if (!/^\/Users$/i.test(operation.path)) throw new NotFound(`${operation.path.slice(0, 100)} takes no POST here: a bulk POST's path is /Users`);
    const user = await writes.create(actor, orgId, data);
    created.set(operation.bulkId!, user.id);
    return { user, status: 201 };
  }
  const userId = userIdOf(operation.path, created);
  if (operation.method === 'DELETE') {
    await writes.remove(actor, orgId, userId, precondition);
    return { status: 204 };
  }
  const change = operation.method === 'PUT' ? writes.replace : writes.patch;
  return { user: await change(actor, orgId, userId, data, precondition), status: 200 };
}

/**
 * `POST /scim/v2/{orgId}/Bulk`: 200 with a BulkResponse whose operations
 * each carry their own status, location and version, or their error body
 * (RFC 7644 3.7.3). After `failOnErrors` failed operations the rest are
 * not run and not listed.
 */
export function bulkHandler(writes: UserWrites, log: Logger, baseOf: (ctx: Context) => string) {
  return async (ctx: Context): Promise<void> => {
    const { operations, failOnErrors } = operationsOf(ctx.request.body);
    const actor = ctx.state.principal as Principal;
    const orgId = ctx.params.orgId!;
    const created = new Map<string, string>();
    const results: OperationResult[] = [];
    let errors = 0;
    for (const operation of operations) {
      if (failOnErrors !== undefined && errors >= failOnErrors) break;
      const base = { method: operation.method, ...(operation.bulkId === undefined ? {} : { bulkId: operation.bulkId }) };
      try {
        const { user, status } = await run(writes, actor, orgId, operation, created);
        const location = user ? `${baseOf(ctx)}/Users/${user.id}` : undefined;
        results.push({ ...base, ...(location ? { location } : {}), ...(user ? { version: etagOf(user.version) } : {}), status: String(status) });
      } catch (err) {
        errors += 1;
        const error = scimErrorOf(err, ctx.state.requestId, log);
        results.push({ ...base, status: String(error.status), response: error.body });
      }
    }
    ctx.type = SCIM_CONTENT_TYPE;
    ctx.body = { schemas: [BULK_RESPONSE_SCHEMA], Operations: results };
  };
}
