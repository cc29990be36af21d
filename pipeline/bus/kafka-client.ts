import { readFileSync } from 'node:fs';
import { Kafka, type KafkaConfig, logLevel, type SASLOptions } from 'kafkajs';
import type { TaskKind } from '../../schemas/index.js';
import type { KafkaSecurity } from '../config.js';
import type { Logger } from '../log.js';

/**
 * The largest message: an import request of 500 KB whose secret members, sealed, take about twice
 * their room (the broker's and topic's `max.message.bytes` are set to it, and fetches take it).
 */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** The header of a task's message offered again (BusMessage.again). */
export const OFFERED_AGAIN = 'offered-again';

/** How often a consumer beats within its session: ten times per session timeout. */
export const heartbeatInterval = (sessionTimeoutMs: number): number => Math.floor(sessionTimeoutMs / 10);

/**
 * A Kafka client of this service (client id under the topic prefix), logging through `log`, with
 * TLS and SASL as configured.
 */
export function kafkaClient(
  brokers: readonly string[],
  prefix: string,
  log: Logger,
  security: KafkaSecurity = {},
): Kafka {
  return new Kafka({
    clientId: `${prefix}users-service`,
    brokers: [...brokers],
    // A broker that died leaves its partitions without a leader until the cluster fences it:
    // retried often (every second at most) rather than with kafkajs's doubling to 30 s, a send
    // goes out as soon as a new leader is known, within about the same total budget.
    retry: { initialRetryTime: 100, maxRetryTime: 1_000, retries: 30 },
    ...securityOptions(security),
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => {
      const fields = { component: 'kafka', ...entry.log };
      if (entry.level <= logLevel.ERROR) log.error(fields, entry.log.message);
      else log.warn(fields, entry.log.message);
    },
  });
}

/** kafkajs's `ssl` and `sasl` options from the settings; the PEM files are read once, here. */
function securityOptions({ ssl, sasl }: KafkaSecurity): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const pem = (file: string | undefined) => (file ? readFileSync(file, 'utf8') : undefined);
  return {
    ...(ssl
      ? {
          ssl:
            ssl.caFile || ssl.certFile
              ? {
                  ...(ssl.caFile ? { ca: [pem(ssl.caFile) as string] } : {}),
                  ...(ssl.certFile ? { cert: pem(ssl.certFile), key: pem(ssl.keyFile) } : {}),
                }
              : true,
        }
      : {}),
    // kafkajs types each mechanism apart; the three take the same username and password.
    ...(sasl ? { sasl: { ...sasl } as SASLOptions } : {}),
  };
}

/** Topic of a task kind: one per kind, so that each worker kind scales by its own partitions. */
export function taskTopic(prefix: string, kind: TaskKind): string {
  return `${prefix}user-${kind}`;
}

/** Runs `use` with a connected admin client. */
export async function withAdmin<T>(
  kafka: Kafka,
  use: (admin: ReturnType<Kafka['admin']>) => Promise<T>,
): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}
