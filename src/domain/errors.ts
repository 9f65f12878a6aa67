// Typed errors of the domain, thrown anywhere and turned into the wire
// format in one place (admin/errors.ts). Their messages are shown to callers,
// so they never carry a secret.

export interface FieldViolation {
  field: string;
  description: string;
}

/**
 * Refusals a caller tells apart from others of the same code without reading
 * the message, which may be reworded (docs/api/README.md, Errors): the
 * `reason` of the answer's `google.rpc.ErrorInfo`.
 */
export type RefusalReason =
  /** The last ORG_OWNER of an org or IAM_OWNER of the instance would be removed or lose that role. */
  | 'LAST_OWNER'
  /** The caller lacks a role the member it would change holds. */
  | 'MEMBER_ROLES_NOT_HELD';

export class DomainError extends Error {
  /** Set on refusals callers tell apart; the others answer their code's generic reason. */
  readonly reason?: RefusalReason;
  constructor(message: string, options: { reason?: RefusalReason } = {}) {
    super(message);
    if (options.reason) this.reason = options.reason;
  }
}

export class InvalidArgument extends DomainError {
  override name = 'InvalidArgument';
  readonly violations: FieldViolation[];
  constructor(message: string, violations: FieldViolation[] = [], options: { reason?: RefusalReason } = {}) {
    super(message, options);
    this.violations = violations;
  }
}

export class Unauthenticated extends DomainError {
  override name = 'Unauthenticated';
  /** The `WWW-Authenticate` challenge, when it is not the plain Bearer one. */
  readonly challenge?: string;
  constructor(message: string, challenge?: string) {
    super(message);
    if (challenge) this.challenge = challenge;
  }
}

export class PermissionDenied extends DomainError {
  override name = 'PermissionDenied';
}

export class NotFound extends DomainError {
  override name = 'NotFound';
}

export class AlreadyExists extends DomainError {
  override name = 'AlreadyExists';
}

/** The service cannot take this request now; the caller may try again after `retryAfter` seconds. */
export class Unavailable extends DomainError {
  override name = 'Unavailable';
  readonly retryAfter: number;
  constructor(message: string, retryAfter = 1) {
    super(message);
    this.retryAfter = retryAfter;
  }
}

/** A request body larger than the API accepts. */
export class PayloadTooLarge extends DomainError {
  override name = 'PayloadTooLarge';
}

/** Too many failed authentications from one client address; `retryAfter` in seconds. */
export class ResourceExhausted extends DomainError {
  override name = 'ResourceExhausted';
  readonly retryAfter: number;
  constructor(message: string, retryAfter: number) {
    super(message);
    this.retryAfter = retryAfter;
  }
}

export function fieldError(field: string, description: string): InvalidArgument {
  return new InvalidArgument(`${field}: ${description}`, [{ field, description }]);
}
