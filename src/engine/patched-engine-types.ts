import type { JwtTokenRecord } from './jwt-access-tokens.ts';

// The engine's classes as engine-overrides.ts patches them: only the
// members it reads or replaces (lib/models/ of oidc-provider).

export interface ClientClass {
  prototype: {
    clientId: string;
    backchannelLogout(sub: string, sid: string): Promise<void>;
    clientSecret?: string;
    compareClientSecret(actual: string): boolean;
    responseTypeAllowed(type: string): boolean;
  };
  Schema: { prototype: { dev_mode?: boolean; invalidate(message: string, code?: string): void } };
  find(id: string): Promise<unknown>;
  adapter: { find(id: string): Promise<object | undefined> };
}

export interface ReplayDetectionClass {
  unique(iss: string, jti: string, exp: number): Promise<boolean>;
  adapter: { claim?(id: string, payload: object, expiresIn: number): Promise<boolean> };
}

/** A replay record to write once, as the adapters' `claim` takes it. */
export interface Claim {
  model: 'ReplayDetection';
  id: string;
  payload: object;
  expiresIn: number;
}

export interface ClaimingAdapter {
  upsertClaiming?(claim: Claim, id: string, payload: object, expiresIn?: number): Promise<boolean>;
}

export interface RefreshTokenRecord {
  jti: string;
  emit(event: string): void;
}

export interface RefreshTokenClass {
  prototype: RefreshTokenRecord & { consume(): Promise<void>; save(): Promise<string> };
  adapter: RotatingAdapter;
}

export interface RotatingAdapter {
  upsert(id: string, payload: object, expiresIn?: number): Promise<void>;
  rotate?(consumedId: string, id: string, payload: object, expiresIn?: number): Promise<boolean>;
}

export interface RecordStore {
  find(id: string): Promise<{ grantId?: string } | undefined>;
  /** adapters/postgres.ts: the record and its grant in one round trip. */
  findWithGrant?(id: string): Promise<{ record?: { grantId?: string }; grant?: object }>;
}

export interface TokenClass {
  prototype: { getValueAndPayload(this: TokenRecord): Promise<{ value: string; payload: unknown }> };
  find(value: string, options?: unknown): Promise<unknown>;
}

export type TokenRecord = JwtTokenRecord & {
  /** Set by token exchange: the requested token type decides the format. */
  format_override?: 'jwt' | 'opaque';
  client?: JwtTokenRecord['client'] & { access_token_type?: string };
};
