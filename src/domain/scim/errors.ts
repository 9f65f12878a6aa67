import { DomainError, InvalidArgument } from '../errors.ts';

// The `scimType` values of RFC 7644 3.12 that a 400 of ours carries. A
// conflict (409 `uniqueness`) is the domain's AlreadyExists.

export type ScimType = 'invalidFilter' | 'invalidSyntax' | 'invalidPath' | 'invalidValue' | 'mutability' | 'noTarget';

/** A request the SCIM protocol refuses with 400 and this `scimType`. */
export class ScimInvalid extends InvalidArgument {
  override name = 'ScimInvalid';
  readonly scimType: ScimType;
  constructor(scimType: ScimType, message: string) {
    super(message);
    this.scimType = scimType;
  }
}

/** A `filter` (or a PATCH path's value filter) that is not of the grammar of RFC 7644 3.4.2.2, or asks what cannot be answered. */
export class InvalidFilter extends ScimInvalid {
  override name = 'InvalidFilter';
  constructor(message: string) {
    super('invalidFilter', message);
  }
}

/** An `If-Match` that the resource's current version does not meet (RFC 7644 3.14): 412. */
export class PreconditionFailed extends DomainError {
  override name = 'PreconditionFailed';
}
