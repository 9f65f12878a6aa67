import type { AddressInfo, Socket } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './server.ts';

/** What a test's SMTP server does with the next mail it is given. */
export type SinkBehaviour =
  /** Accepts and keeps it. */
  | 'accept'
  /** Answers the recipient with this permanent error (e.g. `550 no such user`). */
  | { refuse: string }
  /** Dies while the mail's data is arriving, before answering it: the sender sees a dropped connection. */
  | 'die';

/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1 that keeps
 * what arrives, parsed by `mailparser`; it can refuse, die mid-delivery and
 * come back on the same port.
 */
export interface SmtpSink {
  port: number;
  /** `smtp://…?tls=none` for SMTP_URL, with `auth` as `user:pass` when given. */
  url(auth?: string): string;
  received: ParsedMail[];
  /** The logins the server was given, as `user:pass`. */
  logins: string[];
  /** Decides what happens to each next mail (by its index among all offered so far). */
  behaviour: (index: number) => SinkBehaviour;
  /** Resolves once `count` mails have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ParsedMail[]>;
  /** Listening again on the same port after a death or a stop. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  readonly running: boolean;
}

export async function startSmtpSink(port?: number): Promise<SmtpSink> {
  const sinkPort = port ?? (await freePort());
  const received: ParsedMail[] = [];
  const logins: string[] = [];
  const sockets = new Set<Socket>();
  let offered = 0;
  let server: SMTPServer | undefined;

  const kill = () => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    return new Promise<void>((resolve) => (current ? current.close(() => resolve()) : resolve()));
  };

  const listen = async () => {
    const created: SMTPServer = new SMTPServer({
      disabledCommands: ['STARTTLS'],
      authOptional: true,
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, callback) {
        logins.push(`${auth.username}:${auth.password}`);
        callback(null, { user: auth.username });
      },
      onRcptTo(_address, _session, callback) {
        const behaviour = sink.behaviour(offered);
        if (typeof behaviour === 'object') {
          offered += 1;
          const [code, ...text] = behaviour.refuse.split(' ');
          return callback(Object.assign(new Error(text.join(' ')), { responseCode: Number(code) }));
        }
        callback();
      },
      onData(stream, _session, callback) {
        const behaviour = sink.behaviour(offered);
        offered += 1;
        if (behaviour === 'die') {
          stream.resume();
          void kill();
          return;
        }
        simpleParser(stream).then(
          (mail) => {
            received.push(mail);
            callback();
          },
          (err: Error) => callback(err),
        );
      },
    });
    created.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      created.server.once('error', reject);
      created.listen(sinkPort, '127.0.0.1', () => resolve());
    });
    server = created;
  };

  await listen();
  const sink: SmtpSink = {
    port: (server!.server.address() as AddressInfo).port,
    url: (auth) => `smtp://${auth ? `${auth}@` : ''}127.0.0.1:${sinkPort}?tls=none`,
    received,
    logins,
    behaviour: () => 'accept',
    async waitFor(count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`the sink got ${received.length} mails, not ${count}, within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return received;
    },
    restart: () => (server ? Promise.resolve() : listen()),
    stop: kill,
    get running() {
      return server !== undefined;
    },
  };
  return sink;
}
