/** The bodies of `/admin/v1/smtp` (docs/api/notifications.md). */

const address = { type: 'string', format: 'email', maxLength: 254 } as const;
/** Host names and IP addresses; nothing a header or a URL could smuggle. */
const host = { type: 'string', minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$|^[0-9A-Fa-f:.]+$' } as const;
/** Printable, no line breaks: it becomes part of the From header. */
const displayName = { type: 'string', maxLength: 200, pattern: '^[^\\r\\n\\u0000-\\u001f"<>]*$' } as const;

export const smtpSettingsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['senderAddress', 'host', 'port', 'tls'],
  properties: {
    senderAddress: address,
    senderName: displayName,
    host,
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    user: { type: 'string', maxLength: 320, pattern: '^[^\\u0000-\\u001f]*$' },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
    tls: { enum: ['TLS_MODE_NONE', 'TLS_MODE_STARTTLS', 'TLS_MODE_IMPLICIT'] },
  },
} as const;

export const smtpTestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['receiverAddress'],
  properties: { receiverAddress: address },
} as const;
