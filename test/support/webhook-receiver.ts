import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';

/** One request a receiver took: its path, headers, raw body, and when it came. */
export interface ReceivedEvent {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly at: Date;
}

/** How a receiver answers each path: a status code, or `hang` (never answer). */
export type ReceiverAnswer = number | 'hang';

/**
 * A real HTTP server a test starts on a port of its own: it records every request and answers
 * each path as told (200 unless told otherwise). It can be stopped and started again on the same
 * port, as a receiver that is down for a while.
 */
export class WebhookReceiver {
  readonly received: ReceivedEvent[] = [];
  private readonly answers = new Map<string, ReceiverAnswer>();
  private readonly hanging = new Set<ServerResponse>();
  private server: Server | undefined;

  /** A receiver on `port` (a free one is picked when none is given): known before it listens. */
  constructor(private readonly port = 30_000 + Math.floor(Math.random() * 5_000)) {}

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  answer(path: string, answer: ReceiverAnswer): void {
    this.answers.set(path, answer);
  }

  /** Listens on its port (again, after a stop). */
  async start(): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        const path = req.url ?? '/';
        this.received.push({ path, headers: req.headers, body, at: new Date() });
        const answer = this.answers.get(path) ?? 200;
        if (answer === 'hang') this.hanging.add(res);
        else res.writeHead(answer).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** Stops listening and drops every connection: the receiver is down. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The requests to `path` whose body names this task. */
  eventsOf(path: string, taskId: string): ReceivedEvent[] {
    return this.received.filter((r) => r.path === path && JSON.parse(r.body).payload?.task_id === taskId);
  }
}

/** Whether the request's x-authgear-body-signature is the HMAC-SHA256 of its body under `secret`. */
export function signatureVerifies(event: ReceivedEvent, secret: string): boolean {
  const given = Buffer.from(String(event.headers['x-authgear-body-signature'] ?? ''), 'hex');
  const expected = createHmac('sha256', secret).update(event.body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}
