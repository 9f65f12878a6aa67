// Calls of the admin and management API with the signed-in user's token.
// Errors keep the API's code, message and field violations (docs/api/README.md).

export interface FieldViolation {
  field: string;
  description: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly violations: FieldViolation[];
  constructor(status: number, message: string, violations: FieldViolation[]) {
    super(message);
    this.status = status;
    this.violations = violations;
  }
}

export interface Api {
  // biome-ignore lint/suspicious/noExplicitAny: answers are the API's JSON; each page names the shape it reads
  call<T = any>(method: string, path: string, body?: unknown): Promise<T>;
}

export interface Page<T> {
  details: { totalResult: string };
  result: T[];
}

/** One page of a search call, remembering where it starts: a page shown while the next loads keeps its own numbers. */
export async function searchPage<T>(
  api: Api,
  path: string,
  offset: number,
  limit: number,
  body: { asc?: boolean; queries?: object[] } = {},
): Promise<Page<T> & { offset: number }> {
  const page = await api.call<Page<T>>('POST', path, { query: { offset: String(offset), limit, asc: body.asc ?? true }, queries: body.queries ?? [] });
  return { ...page, offset };
}

export function createApi(token: () => string, orgId: () => string | undefined, onUnauthenticated: () => void): Api {
  return {
    async call(method, path, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${token()}` };
      const org = orgId();
      if (org) headers['x-service-orgid'] = org;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await response.text();
      // biome-ignore lint/suspicious/noExplicitAny: the API's JSON, typed by the caller of `call`
      const parsed = text ? (JSON.parse(text) as any) : {};
      if (response.status === 401) onUnauthenticated();
      if (!response.ok) {
        const violations: FieldViolation[] = (parsed.details ?? []).flatMap((d: { fieldViolations?: FieldViolation[] }) => d.fieldViolations ?? []);
        throw new ApiError(response.status, String(parsed.message ?? response.statusText), violations);
      }
      return parsed;
    },
  };
}
