import { fetch as undiciFetch, type Agent } from 'undici';
import type { Logger } from '../logger.ts';
import { privateAllowedFor, type CallerTrust } from './address-policy.ts';
import { checkedAgent } from './checked-agent.ts';
import { OutboundError, OutboundRefused, OutboundTimeout, OutboundTooLarge } from './errors.ts';

/** The shape of fetch, so that libraries taking a custom fetch (openid-client's customFetch, the engine's) can be handed one. */
export type OutboundFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

const DEFAULT_TIMEOUT_MS = 5_000;
export const MAX_BODY_BYTES = 1024 * 1024;

export interface OutboundSettings {
  /** OUTBOUND_ALLOW_PRIVATE: every caller may reach loopback and private addresses (local development). */
  allowPrivate: boolean;
  log: Logger;
  /** Largest answer body read, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
}

export interface OutboundCaller {
  trust: CallerTrust;
  /** The whole call, answer body included (default 5 s). */
  timeoutMs?: number;
}

export interface OutboundClient {
  /** A fetch for one kind of caller: its addresses checked, no redirects followed, limited in time and size. */
  fetcher(caller: OutboundCaller): OutboundFetch;
  close(): Promise<void>;
}

// Statuses whose answer has no body (Fetch 2.2.3: null body status).
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

function isTimeout(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'TimeoutError';
}

/** What undici threw, as one of our errors when it is one: a refusal arrives as the cause of fetch's TypeError. */
function typed(err: unknown, host: string): OutboundError | undefined {
  if (err instanceof OutboundError) return err;
  if (isTimeout(err)) return new OutboundTimeout(host);
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof OutboundError ? cause : isTimeout(cause) ? new OutboundTimeout(host) : undefined;
}

/** The answer's body, erroring with OutboundTooLarge (and the connection dropped) past `maxBytes` decoded bytes. */
function limitedBody(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  fail: (err: unknown) => unknown,
  tooLarge: () => OutboundTooLarge,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let read = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) return controller.close();
        read += chunk.value.byteLength;
        if (read > maxBytes) {
          await reader.cancel().catch(() => {});
          return controller.error(fail(tooLarge()));
        }
        controller.enqueue(chunk.value);
      } catch (err) {
        controller.error(fail(err));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * The one HTTP client for calls the server makes to other hosts
 * (back-channel logout, and identity providers, webhooks and the SMS relay
 * as they come). undici (the HTTP client Node's own fetch is built on)
 * gives a dispatcher whose connections go through our checked lookup.
 */
export function outboundClient(settings: OutboundSettings): OutboundClient {
  const maxBytes = settings.maxBodyBytes ?? MAX_BODY_BYTES;
  // One agent per address rule, so that a pooled connection opened for a
  // trusted caller is never reused by an untrusted one.
  const agents = new Map<boolean, Agent>();
  const agentFor = (privateAllowed: boolean): Agent => {
    let agent = agents.get(privateAllowed);
    if (!agent) {
      agent = checkedAgent(privateAllowed);
      agents.set(privateAllowed, agent);
    }
    return agent;
  };

  return {
    fetcher({ trust, timeoutMs = DEFAULT_TIMEOUT_MS }) {
      const privateAllowed = privateAllowedFor(trust, settings.allowPrivate);
      return async (input, init = {}) => {
        const url = new URL(String(input));
        // The host only: a path or query may carry a secret of the caller.
        const host = url.host;
        const fail = (err: unknown): unknown => {
          const known = typed(err, host);
          if (!known) return err;
          settings.log.warn({ host, trust, error: known.kind, reason: known.message }, 'outbound call failed');
          return known;
        };
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail(new OutboundRefused(host, 'scheme'));

        const deadline = AbortSignal.timeout(timeoutMs);
        const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
        let response: Response;
        try {
          // The caller's own dispatcher (the engine sets one) is replaced; redirects are answered as they are.
          response = (await undiciFetch(url, {
            ...(init as object),
            signal,
            redirect: 'manual',
            dispatcher: agentFor(privateAllowed),
          })) as unknown as Response;
        } catch (err) {
          throw fail(err);
        }

        const tooLarge = () => new OutboundTooLarge(host, maxBytes);
        if (Number(response.headers.get('content-length')) > maxBytes) {
          await response.body?.cancel().catch(() => {});
          throw fail(tooLarge());
        }
        const body = response.body && !NULL_BODY_STATUSES.has(response.status) ? limitedBody(response.body, maxBytes, fail, tooLarge) : null;
        return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
      };
    },
    async close() {
      await Promise.all([...agents.values()].map((agent) => agent.close()));
    },
  };
}
