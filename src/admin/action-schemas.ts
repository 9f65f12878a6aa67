import { FUNCTION_NAMES, MAX_TIMEOUT_MS, MIN_TIMEOUT_MS, endpointProblem, timeoutMs } from '../domain/actions.ts';
import type { FieldViolation } from '../domain/errors.ts';
import { MAX_LIMIT } from '../domain/search.ts';

// The bodies of /v2beta/actions (docs/api/actions.md). As in schemas.ts, a
// `description` is what a caller reads when the value does not fit.

const interrupt = { type: 'object', additionalProperties: false, properties: { interruptOnError: { type: 'boolean' } } } as const;

export const targetSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'endpoint', 'timeout'],
  minProperties: 4,
  maxProperties: 4,
  description: 'must hold name, endpoint, timeout and exactly one of restWebhook, restCall, restAsync',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f]*$', description: 'must be printable text' },
    endpoint: { type: 'string', minLength: 1, maxLength: 2000 },
    timeout: {
      type: 'string',
      maxLength: 20,
      pattern: '^[0-9]{1,5}(\\.[0-9]{1,9})?s$',
      description: `must be a duration in seconds such as "10s", from ${MIN_TIMEOUT_MS / 1000}s to ${MAX_TIMEOUT_MS / 1000}s`,
    },
    restWebhook: interrupt,
    restCall: interrupt,
    restAsync: { type: 'object', additionalProperties: false, properties: {} },
  },
} as const;

/** What a schema cannot say: the endpoint's rules and the timeout's bounds. */
export function targetRules(body: { endpoint?: unknown; timeout?: unknown }): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const problem = typeof body.endpoint === 'string' && body.endpoint ? endpointProblem(body.endpoint) : undefined;
  if (problem) violations.push({ field: 'endpoint', description: problem });
  if (typeof body.timeout === 'string' && /^[0-9]{1,5}(\.[0-9]{1,9})?s$/.test(body.timeout) && timeoutMs(body.timeout) === undefined) {
    violations.push({ field: 'timeout', description: `must be from ${MIN_TIMEOUT_MS / 1000}s to ${MAX_TIMEOUT_MS / 1000}s` });
  }
  return violations;
}

/** Event names and groups as the event log writes them: dotted lower-case words. */
const eventName = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: '^[a-z0-9_]+(\\.[a-z0-9_]+)*$',
  description: 'must be dotted lower-case words such as user.human.added',
};

export const executionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['condition', 'targets'],
  properties: {
    condition: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      description: 'must hold exactly one of event, function',
      properties: {
        event: {
          type: 'object',
          additionalProperties: false,
          minProperties: 1,
          maxProperties: 1,
          description: 'must hold exactly one of event, group, all',
          properties: { event: eventName, group: eventName, all: { type: 'boolean', const: true, description: 'must be true' } },
        },
        function: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: { name: { type: 'string', enum: [...FUNCTION_NAMES] } },
        },
      },
    },
    targets: {
      type: 'array',
      maxItems: 20,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['target'],
        properties: { target: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'must be a target id' } },
      },
    },
  },
} as const;

/** A page of a list; the actions' searches take no queries yet. */
export const actionSearchSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        offset: {
          anyOf: [
            { type: 'integer', minimum: 0, maximum: 1e15 },
            { type: 'string', pattern: '^[0-9]{1,15}$' },
          ],
          description: 'must be a whole number of at least 0',
        },
        limit: {
          anyOf: [
            { type: 'integer', minimum: 0, maximum: MAX_LIMIT },
            { type: 'string', pattern: '^[0-9]{1,4}$' },
          ],
          description: `must be a whole number from 0 (the default, 100) to ${MAX_LIMIT}`,
        },
        asc: { type: 'boolean' },
      },
    },
  },
} as const;
