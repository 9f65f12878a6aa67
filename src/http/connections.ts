import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a keep-alive connection must have been idle before a stopping server closes it. */
const IDLE_GRACE_MS = 250;

export interface ConnectionTracker {
  /** From now on every response says `Connection: close`, those of requests already being handled included. */
  beginStop(): void;
  /** Closes the connections that have been idle for a moment. */
  closeIdle(): void;
}

/**
 * The connections of a server, for a graceful stop (RFC 9112 9.6, 9.8).
 * Once stopping, a keep-alive connection is closed after its current
 * request, by that response's `Connection: close`. One without a request
 * (not even the first bytes of one) is closed once it has been idle for
 * IDLE_GRACE_MS, not at the instant it
 * turns idle: a busy client sends its next request on it within a
 * millisecond, and closing the connection then would reset that request
 * instead of answering it.
 */
export function trackConnections(server: Server): ConnectionTracker {
  const requests = new Map<Socket, number>();
  /** Sockets without a request, with when they became so and how many bytes they had read then. */
  const idleSince = new Map<Socket, { at: number; bytesRead: number }>();
  const markIdle = (socket: Socket) => idleSince.set(socket, { at: Date.now(), bytesRead: socket.bytesRead });
  const unanswered = new Set<ServerResponse>();
  let stopping = false;
  const closeAfter = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };

  server.on('connection', (socket: Socket) => {
    markIdle(socket);
    socket.once('close', () => {
      idleSince.delete(socket);
      requests.delete(socket);
    });
  });
  server.on('request', (req, res: ServerResponse) => {
    const socket = req.socket;
    requests.set(socket, (requests.get(socket) ?? 0) + 1);
    idleSince.delete(socket);
    if (stopping) closeAfter(res);
    else unanswered.add(res);
    res.once('close', () => {
      unanswered.delete(res);
      const left = (requests.get(socket) ?? 1) - 1;
      if (socket.destroyed) return;
      requests.set(socket, left);
      if (left === 0) markIdle(socket);
    });
  });

  return {
    beginStop() {
      stopping = true;
      for (const res of unanswered) closeAfter(res);
      unanswered.clear();
    },
    closeIdle() {
      const now = Date.now();
      for (const [socket, idle] of idleSince) {
        // Bytes read since: a request is on its way, its headers not complete yet.
        if (socket.bytesRead !== idle.bytesRead) continue;
        if (now - idle.at >= IDLE_GRACE_MS) socket.destroy();
      }
    },
  };
}
