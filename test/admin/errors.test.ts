import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { toWire } from '../../src/admin/errors.ts';
import { AlreadyExists, fieldError, InvalidArgument, NotFound, PermissionDenied } from '../../src/domain/errors.ts';

// docs/api/README.md, Errors: every error but a 400 naming its fields carries
// an ErrorInfo detail, whose reason is the error's own when it has one and
// its code's generic one otherwise.

const reasonsOf = (err: unknown) =>
  toWire(err, 'req-1')
    .body.details.filter((d) => d['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo')
    .map((d) => d.reason);

describe('toWire: ErrorInfo reasons', () => {
  test('an error without a reason of its own answers its code’s generic one', () => {
    assert.deepEqual(reasonsOf(new PermissionDenied('no')), ['PERMISSION_DENIED']);
    assert.deepEqual(reasonsOf(new NotFound('gone')), ['NOT_FOUND']);
    assert.deepEqual(reasonsOf(new AlreadyExists('twice')), ['ALREADY_EXISTS']);
    assert.deepEqual(reasonsOf(new InvalidArgument('bad')), ['INVALID_ARGUMENT']);
    assert.deepEqual(reasonsOf(new Error('a bug')), ['INTERNAL']);
  });

  test('a specific reason replaces the generic one, with the same code and message', () => {
    const wire = toWire(new PermissionDenied('needs every role', { reason: 'MEMBER_ROLES_NOT_HELD' }), 'req-1');
    assert.equal(wire.status, 403);
    assert.equal(wire.body.code, 7);
    assert.equal(wire.body.message, 'needs every role');
    assert.deepEqual(
      wire.body.details.map((d) => d.reason),
      ['MEMBER_ROLES_NOT_HELD'],
    );
    assert.deepEqual(reasonsOf(new InvalidArgument('the last owner', [], { reason: 'LAST_OWNER' })), ['LAST_OWNER']);
  });

  test('a 400 naming its fields has no ErrorInfo, unless it has a reason of its own', () => {
    assert.deepEqual(reasonsOf(fieldError('roles', 'must not be empty')), []);
    const both = toWire(new InvalidArgument('roles', [{ field: 'roles', description: 'x' }], { reason: 'LAST_OWNER' }), 'req-1').body.details;
    assert.deepEqual(
      both.map((d) => d['@type']),
      ['type.googleapis.com/google.rpc.BadRequest', 'type.googleapis.com/google.rpc.ErrorInfo'],
    );
  });

  test('an empty reason is no reason: the generic one stays', () => {
    assert.deepEqual(reasonsOf(new NotFound('gone', {})), ['NOT_FOUND']);
    assert.deepEqual(reasonsOf(new NotFound('gone', { reason: undefined })), ['NOT_FOUND']);
  });
});
