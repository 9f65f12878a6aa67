import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';

// A round-robin HTTP load balancer for tests, doing what a real one in front
// of the nodes does (docs/operations.md, "Several nodes"): health checks on
// GET /readyz, keep-alive connections to the nodes, X-Forwarded-* headers,
// and a retry on another node when a node refuses the connection (the
// request never reached it).

export interface LoadBalancer {
  url: string;
  /** Which node answered each request, by port, in order. */
  served: number[];
  close(): Promise<void>;
}

const HEALTH_INTERVAL_MS = 250;

export async function startLoadBalancer(port: number, backends: number[]): Promise<LoadBalancer> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const healthy = new Set(backends);
  const served: number[] = [];
  let next = 0;

  const check = async (backend: number) => {
    try {
      const res = await fetch(`http://127.0.0.1:${backend}/readyz`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) healthy.add(backend);
      else healthy.delete(backend);
    } catch {
      healthy.delete(backend);
    }
  };
  const checker = setInterval(() => backends.forEach((b) => void check(b)), HEALTH_INTERVAL_MS);

  const pick = (exclude: Set<number>): number | undefined => {
    const candidates = backends.filter((b) => healthy.has(b) && !exclude.has(b));
    if (candidates.length === 0) return undefined;
    next = (next + 1) % candidates.length;
    return candidates[next];
  };

  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse, tried: Set<number>) => {
    const backend = pick(tried);
    if (backend === undefined) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end('no healthy node');
      return;
    }
    tried.add(backend);
    const headers = {
      ...req.headers,
      'x-forwarded-for': req.socket.remoteAddress ?? '',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': req.headers.host ?? '',
    };
    const upstream = request({ host: '127.0.0.1', port: backend, method: req.method, path: req.url, headers, agent }, (answer) => {
      served.push(backend);
      const { connection: _hop, 'keep-alive': _alive, ...kept } = answer.headers;
      res.writeHead(answer.statusCode ?? 502, kept);
      answer.pipe(res);
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      // A refused connection never carried the request: another node may take it.
      if (err.code === 'ECONNREFUSED') {
        healthy.delete(backend);
        forward(req, body, res, tried);
      } else if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`node ${backend}: ${err.code ?? err.message}`);
      } else {
        res.destroy();
      }
    });
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => forward(req, Buffer.concat(chunks), res, new Set()));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: async () => {
      clearInterval(checker);
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
