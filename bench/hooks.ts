import pg from 'pg';
import { receiverTls, startReceiver, type Receiver } from '../test/actions/receiver.ts';
import { cpuSecondsOf, sampleRss } from './processes.ts';
import { measureHttp, type HttpLoad, type RunSettings, type ScenarioReport } from './scenarios.ts';

// Actions under load (docs/actions.md): the token endpoint with a
// preaccesstoken hook answered by a receiver in this process, and event
// deliveries from the log to such a receiver. The receiver is the tests'
// one (test/actions/receiver.ts): HTTPS with a self-signed certificate,
// which the server trusts through NODE_EXTRA_CA_CERTS, and it checks every
// signature.

type AdminApi = (method: string, path: string, body?: unknown) => Promise<any>;

/** NODE_EXTRA_CA_CERTS for our server, so it trusts the receivers' certificate. */
export function receiverCaFile(): string {
  return receiverTls().caFile;
}

async function receiverTarget(api: AdminApi, name: string, type: 'restCall' | 'restWebhook'): Promise<{ id: string; receiver: Receiver }> {
  const receiver = await startReceiver();
  const { id, signingKey } = await api('POST', '/v2beta/actions/targets', { name, endpoint: receiver.url, timeout: '5s', [type]: { interruptOnError: true } });
  receiver.key = signingKey;
  return { id, receiver };
}

function signatureProblems(receiver: Receiver): string {
  return receiver.badSignatures.length ? `; ${receiver.badSignatures.length} calls with a bad signature` : '';
}

/**
 * `client_credentials_jwt_hook`: the `client_credentials_jwt` load with a
 * preaccesstoken hook that adds one claim; the execution is removed again
 * at the end, so no other scenario calls the hook.
 */
export async function tokenHookScenario(
  target: { base: string; pid: number; api: AdminApi; load: HttpLoad; settings: RunSettings },
  preflight: (load: HttpLoad, check: (body: any) => string | undefined) => Promise<unknown>,
): Promise<ScenarioReport> {
  const { api, load } = target;
  const { id, receiver } = await receiverTarget(api, 'bench-preaccesstoken', 'restCall');
  receiver.answer = () => ({ status: 200, body: '{"append_claims":[{"key":"bench_hook","value":"1"}]}' });
  const condition = { function: { name: 'preaccesstoken' } };
  await api('PUT', '/v2beta/actions/executions', { condition, targets: [{ target: id }] });
  try {
    await preflight(load, (body) => {
      const payload = String(body?.access_token ?? '').split('.')[1];
      const claims = payload ? JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) : {};
      return claims.bench_hook === '1' ? undefined : 'the JWT access token lacks the hook claim';
    });
    const report = await measureHttp(target.base, target.pid, load, target.settings);
    return { ...report, detail: `${receiver.attempts.length} hook calls, one per token${signatureProblems(receiver)}; ${report.detail}` };
  } finally {
    await api('PUT', '/v2beta/actions/executions', { condition, targets: [] });
    await receiver.close();
  }
}

/**
 * `action_deliveries`: events per second from the log to one webhook
 * target. The events (`bench.delivery.tick`, matched by the group `bench`)
 * are written straight into the server's schema in one statement after the
 * execution is set, and the clock runs from their commit to the last one
 * received. PostgreSQL only: the embedded database is the server's alone.
 */
export async function deliveryScenario(target: {
  pid: number;
  api: AdminApi;
  databaseUrl: string | undefined;
  schema: string;
  events: number;
  timeoutSeconds: number;
}): Promise<ScenarioReport> {
  if (!target.databaseUrl) throw new Error('needs DATABASE_URL (or BENCH_STORES=own): the events are written straight into PostgreSQL');
  const { id, receiver } = await receiverTarget(target.api, 'bench-deliveries', 'restWebhook');
  const condition = { event: { group: 'bench' } };
  await target.api('PUT', '/v2beta/actions/executions', { condition, targets: [{ target: id }] });
  const client = new pg.Client({ connectionString: target.databaseUrl });
  await client.connect();
  const rss = sampleRss(target.pid);
  try {
    await client.query(`SET search_path TO "${target.schema}"`);
    const cpuBefore = cpuSecondsOf(target.pid);
    await client.query(
      `INSERT INTO events (aggregate_type, aggregate_id, event_type, resource_owner, creator, payload, created_at)
       SELECT 'bench', 'bench-' || i, 'bench.delivery.tick', (SELECT id FROM instance LIMIT 1), NULL, jsonb_build_object('i', i), clock_timestamp()
         FROM generate_series(1, $1) AS i`,
      [target.events],
    );
    // The receiver stamps each delivery with Date.now().
    const started = Date.now();
    const deadline = started + target.timeoutSeconds * 1000;
    while (receiver.deliveries.length < target.events && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const seconds = ((receiver.deliveries.at(-1)?.at ?? started) - started) / 1000;
    const delivered = new Set(receiver.deliveries.map((d) => d.body.aggregateID)).size;
    const cpuAfter = cpuSecondsOf(target.pid);
    const cpu = cpuBefore !== undefined && cpuAfter !== undefined && delivered ? Math.round(((cpuAfter - cpuBefore) * 1e6) / delivered) : null;
    const peak = rss.stop();
    return {
      rps: seconds > 0 ? Math.round((delivered / seconds) * 10) / 10 : 0,
      p50_ms: null,
      p99_ms: null,
      errors: target.events - delivered,
      peak_rss_mb: peak === null ? null : Math.round(peak * 10) / 10,
      server_cpu_us_per_request: cpu,
      detail: `${delivered} of ${target.events} events delivered in ${seconds.toFixed(1)} s (one target, in order)${signatureProblems(receiver)}`,
    };
  } finally {
    rss.stop();
    await client.end();
    await target.api('PUT', '/v2beta/actions/executions', { condition, targets: [] });
    await receiver.close();
  }
}
