import type { ApiErrorBody } from '../../src/admin/errors.ts';
import type { FieldViolation, RefusalReason } from '../../src/domain/errors.ts';
import { MAX_LIMIT } from '../../src/domain/search.ts';
import type { SearchResult } from './views.ts';

// Calls of the admin and management API with the signed-in user's token.
// Errors keep the API's code, message, field violations and reason
// (docs/api/README.md, Errors).

export type { FieldViolation, RefusalReason };

export class ApiError extends Error {
  readonly status: number;
  /** The API's error code (gRPC's: 3 invalid argument, 5 not found, 6 already exists, 7 permission denied, …). */
  readonly code: number;
  readonly violations: FieldViolation[];
  /**
   * The reason of the answer's ErrorInfo detail: a specific refusal
   * (`LAST_OWNER`, …) or the code's generic one; what a page tells apart
   * instead of the message, which the server may reword.
   */
  readonly reason: string;
  constructor(status: number, code: number, message: string, violations: FieldViolation[], reason = '') {
    super(message);
    this.status = status;
    this.code = code;
    this.violations = violations;
    this.reason = reason;
  }

  /** This refusal, whatever its message says. */
  is(reason: RefusalReason): boolean {
    return this.reason === reason;
  }
}

export interface Api {
  /** `T`: what the call answers, one of the server's views (views.ts). */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
}

/** One page of a search answer and where it starts: a page shown while the next loads keeps its own numbers. */
export type SearchPage<T> = SearchResult<T> & { offset: number };

export async function searchPage<T>(
  api: Api,
  path: string,
  offset: number,
  limit: number,
  body: { asc?: boolean; queries?: object[] } = {},
): Promise<SearchPage<T>> {
  const page = await api.call<SearchResult<T>>('POST', path, { query: { offset: String(offset), limit, asc: body.asc ?? true }, queries: body.queries ?? [] });
  return { ...page, offset };
}

/** A whole list to choose from (orgs, projects): one search for as many as the API answers at once. */
export function searchAll<T>(api: Api, path: string): Promise<SearchResult<T>> {
  return api.call<SearchResult<T>>('POST', path, { query: { limit: MAX_LIMIT } });
}

function violationsOf(body: Partial<ApiErrorBody>): FieldViolation[] {
  return (body.details ?? []).flatMap((detail) => (Array.isArray(detail.fieldViolations) ? (detail.fieldViolations as FieldViolation[]) : []));
}

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

function reasonOf(body: Partial<ApiErrorBody>): string {
  const detail = (body.details ?? []).find((d) => d['@type'] === ERROR_INFO);
  return typeof detail?.reason === 'string' ? detail.reason : '';
}

export function createApi(token: () => string, orgId: () => string | undefined, onUnauthenticated: () => void): Api {
  return {
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      const headers: Record<string, string> = { authorization: `Bearer ${token()}` };
      const org = orgId();
      if (org) headers['x-service-orgid'] = org;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await response.text();
      const parsed: unknown = text ? JSON.parse(text) : {};
      if (response.status === 401) onUnauthenticated();
      if (!response.ok) {
        const error = parsed as Partial<ApiErrorBody>;
        throw new ApiError(response.status, Number(error.code ?? 0), String(error.message ?? response.statusText), violationsOf(error), reasonOf(error));
      }
      return parsed as T;
    },
  };
}
