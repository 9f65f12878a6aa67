import { addressRefusal } from '../outbound/address-policy.ts';

// Actions (docs/actions.md, after ZITADEL's Actions v2): targets the service
// calls and the conditions that call them. Plain rules, no SQL.

export const TARGET_TYPES = ['restWebhook', 'restCall', 'restAsync'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

export const FUNCTION_NAMES = ['preaccesstoken', 'preuserinfo', 'presamlresponse'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/** A target's timeout, in milliseconds: from 0.1 s (a token hook on the hot path) to 30 s (a webhook). */
export const MIN_TIMEOUT_MS = 100;
export const MAX_TIMEOUT_MS = 30_000;

/** What calls a target: one kind of event, a group of them, every event, or a token hook. */
export type Condition = { kind: 'event'; event: string } | { kind: 'group'; group: string } | { kind: 'all' } | { kind: 'function'; name: FunctionName };

/** The wire form of a condition (`{event: {event}}`, `{event: {group}}`, `{event: {all: true}}`, `{function: {name}}`). */
export interface ConditionInput {
  event?: { event?: string; group?: string; all?: boolean };
  function?: { name: FunctionName };
}

/** The condition a schema-checked input names. */
export function conditionOf(input: ConditionInput): Condition {
  if (input.function) return { kind: 'function', name: input.function.name };
  const event = input.event!;
  if (event.event !== undefined) return { kind: 'event', event: event.event };
  if (event.group !== undefined) return { kind: 'group', group: event.group };
  return { kind: 'all' };
}

/** The stored key of a condition: one execution per key. */
export function conditionKey(condition: Condition): string {
  switch (condition.kind) {
    case 'event':
      return `event:${condition.event}`;
    case 'group':
      return `group:${condition.group}`;
    case 'all':
      return 'all';
    case 'function':
      return `function:${condition.name}`;
  }
}

export function conditionFromKey(key: string): Condition {
  if (key === 'all') return { kind: 'all' };
  const [kind, value] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
  if (kind === 'event') return { kind: 'event', event: value };
  if (kind === 'group') return { kind: 'group', group: value };
  return { kind: 'function', name: value as FunctionName };
}

export function conditionToWire(condition: Condition): ConditionInput {
  switch (condition.kind) {
    case 'event':
      return { event: { event: condition.event } };
    case 'group':
      return { event: { group: condition.group } };
    case 'all':
      return { event: { all: true } };
    case 'function':
      return { function: { name: condition.name } };
  }
}

/** `"10s"`, `"0.5s"` (protobuf's JSON duration) in milliseconds, or undefined when outside the bounds. */
export function timeoutMs(text: string): number | undefined {
  const match = /^(\d{1,5})(?:\.(\d{1,9}))?s$/.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * 1000 + Math.round(Number(`0.${match[2] ?? '0'}`) * 1000);
  return ms >= MIN_TIMEOUT_MS && ms <= MAX_TIMEOUT_MS ? ms : undefined;
}

export function timeoutText(ms: number): string {
  return `${ms / 1000}s`;
}

/**
 * Why an endpoint cannot be a target's, or undefined: an absolute https
 * URL with a host, no user or password (they would travel in logs and
 * answers) and no fragment. An IP literal is checked as the outbound client
 * would for an instance-level caller (private addresses allowed, link-local
 * and metadata ones never); names are checked when they are called.
 */
export function endpointProblem(endpoint: string): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'must be an absolute https URL';
  }
  if (url.protocol !== 'https:') return 'must use https';
  if (!url.hostname || !/^https:\/\/[^/?#]/i.test(endpoint)) return 'must name a host';
  if (url.username || url.password) return 'must not carry a user or password';
  if (url.hash || endpoint.includes('#')) return 'must not have a fragment';
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (/^[\d.]+$|:/.test(literal) && addressRefusal(literal, true)) return 'must not be a link-local, metadata or multicast address';
  return undefined;
}

/** Whether a target of this type may serve a condition: token hooks need an answer, so only `restCall`. */
export function targetFitsCondition(type: TargetType, condition: Condition): boolean {
  return condition.kind !== 'function' || type === 'restCall';
}
