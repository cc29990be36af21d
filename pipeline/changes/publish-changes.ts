import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka, Message, Producer } from 'kafkajs';
import { kafkaClient } from '../bus/kafka-client.js';
import { ensureKafkaTopic, type KafkaTopicSettings } from '../bus/kafka-topics.js';
import type { ServiceConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { leasePublication, movePublication } from '../db/user-change-log.js';
import { writeChangeEvents } from '../db/webhook-deliveries.js';
import { EngineError } from '../errors.js';
import type { Logger } from '../log.js';
import { type ProjectRegistry, taskProject } from '../projects/project-registry.js';
import { type RelayLoop, startRelayLoop } from '../relay-loop.js';
import { type ProjectChange, readChanges } from './read-changes.js';

// The feed's publications (docs/changes.md): the same pages the HTTP feed reads, published to a
// sink (the Kafka topic, the webhooks' outbox) by one process of the deployment at a time, which
// leases the publication and moves its cursor after each page is published: at least once, in
// feed order.

/** Where a publication's events go. */
export interface ChangeSink {
  /** The publication's name: its cursor and lease. */
  readonly name: string;
  /**
   * The projects whose events it publishes, among those registered (the others' are passed over
   * unread); undefined: every project's, registered or not.
   */
  projects(registered: readonly string[]): readonly string[] | undefined;
  /** Publishes a page; resolves once the sink holds it (it is not published again after that). */
  publish(changes: readonly ProjectChange[]): Promise<void>;
  close(): Promise<void>;
}

/** Events published per page. */
const PAGE_EVENTS = 1_000;
/** How often a publication looks for events; its lease outlasts a stalled round by far. */
const ROUND_EVERY_MS = 250;
const LEASE_SECONDS = 10;

/**
 * Publishes the feed to `sink` from this process while it holds the publication's lease; every
 * process runs one per sink, and one of them publishes. A round whose sink fails publishes nothing
 * and moves nothing: the next round (or the next owner) publishes the page again.
 */
export function startChangePublication(
  pool: Pool,
  sink: ChangeSink,
  projects: Pick<ProjectRegistry, 'get' | 'ids' | 'refresh'>,
  log: Logger,
): RelayLoop {
  const owner = randomUUID();
  const totpIssuer = async (id: string) => {
    try {
      return (await taskProject(projects, id)).publicOrigin;
    } catch (err) {
      // A project no longer registered (removed without its rows purged): its events still go
      // out, rather than holding every later event of the deployment back.
      if (!(err instanceof EngineError && err.code === 'ProjectUnknown')) throw err;
      log.warn({ project: id }, 'change events of a project that is not registered: TOTP URIs name its id');
      return id;
    }
  };
  const loop = startRelayLoop(`change publication ${sink.name}`, ROUND_EVERY_MS, log, async () => {
    const after = await leasePublication(pool, sink.name, owner, LEASE_SECONDS);
    if (!after) return false;
    const page = await readChanges(pool, {
      scope: sink.projects(projects.ids()),
      after,
      limit: PAGE_EVENTS,
      totpIssuer,
    });
    if (page.changes.length > 0) await sink.publish(page.changes);
    if (page.next.txid === after.txid && page.next.userId === after.userId) return false;
    if (!(await movePublication(pool, sink.name, owner, page.next))) {
      log.warn(
        { publication: sink.name },
        'publication lease lost mid-round; its new owner publishes from its cursor',
      );
      return false;
    }
    return page.full;
  });
  return {
    wake: loop.wake,
    async stop() {
      await loop.stop();
      await sink.close();
    },
  };
}

/** Bytes of events per send to Kafka: a batch stays far below MAX_MESSAGE_BYTES. */
const SEND_BYTES = 1024 * 1024;

/** The deployment's topic of change events, keyed by project and user. */
export const userEventsTopic = (prefix: string) => `${prefix}user-events`;

/**
 * The Kafka topic `<prefix>user-events`: one message per event, the event as the HTTP feed writes
 * it, keyed `<project>/<user id>` (one user's events stay in one partition, in order), the project
 * also in a header. The topic keeps messages as long as the feed keeps events.
 */
export async function kafkaChangeSink(
  kafka: Kafka,
  prefix: string,
  settings: KafkaTopicSettings,
  retentionSeconds: number,
  log: Logger,
): Promise<ChangeSink> {
  const topic = userEventsTopic(prefix);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await ensureKafkaTopic(
      admin,
      { topic, configs: { 'retention.ms': String(retentionSeconds * 1000) } },
      settings,
      log,
    );
  } finally {
    await admin.disconnect();
  }
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  return {
    name: 'kafka',
    projects: () => undefined,
    async publish(changes) {
      // Sent in batches of about SEND_BYTES, each well under the topic's largest message batch.
      let messages: Message[] = [];
      let bytes = 0;
      for (const { project, event } of changes) {
        const value = JSON.stringify(event);
        messages.push({ key: `${project}/${event.user_id}`, value, headers: { project } });
        bytes += value.length;
        if (bytes >= SEND_BYTES) {
          await producer.send({ topic, acks: -1, messages });
          messages = [];
          bytes = 0;
        }
      }
      if (messages.length > 0) await producer.send({ topic, acks: -1, messages });
    },
    close: () => producer.disconnect(),
  };
}

/**
 * The webhooks: each event of a project with an endpoint that subscribes to its type becomes a
 * task event, fanned out, signed and retried as task events are (docs/webhooks.md); its payload is
 * the event with its project.
 */
export function webhookChangeSink(pool: Pool, projects: Pick<ProjectRegistry, 'get'>): ChangeSink {
  const wanted = (project: string, type: string) =>
    projects.get(project)?.webhooks.some((endpoint) => endpoint.events.includes(type)) === true;
  return {
    name: 'webhooks',
    // The type is known once the record is read: the projects with an endpoint of any user
    // event. Without one, no row of the log is read.
    projects: (registered) =>
      registered.filter((project) => USER_EVENTS.some((type) => wanted(project, type))),
    publish: (changes) =>
      writeChangeEvents(
        pool,
        changes
          .filter(({ project, event }) => wanted(project, event.type))
          .map(({ project, event }) => ({
            id: event.id,
            project_id: project,
            type: event.type,
            payload: { ...event, project_id: project },
          })),
      ),
    close: async () => {},
  };
}

const USER_EVENTS = ['user.created', 'user.updated', 'user.deleted'];

/** How long the Kafka publication waits between attempts to reach Kafka when it starts. */
const START_RETRY_MS = 2_000;

/**
 * Starts the feed's publications of a worker process: the webhooks' at once, and, with Kafka
 * configured and CHANGES_KAFKA_TOPIC on, the topic's once the topic exists (retried in the
 * background while Kafka is out of reach, so that the workers start whatever its state).
 */
export function startChangePublications(
  config: ServiceConfig,
  pool: Pool,
  projects: Pick<ProjectRegistry, 'get' | 'ids' | 'refresh'>,
  log: Logger,
): { stop(): Promise<void> } {
  const started: RelayLoop[] = [
    startChangePublication(pool, webhookChangeSink(pool, projects), projects, log),
  ];
  let stopped = false;
  const starting = (async () => {
    if (config.kafkaBrokers.length === 0 || !config.changesKafkaTopic) return;
    const prefix = config.kafkaTopicPrefix;
    const kafka = kafkaClient(config.kafkaBrokers, prefix, log, config.kafkaSecurity);
    for (let attempt = 0; !stopped; attempt++) {
      try {
        const sink = await kafkaChangeSink(
          kafka,
          prefix,
          config.kafkaTopics,
          config.changesRetentionSeconds,
          log,
        );
        if (stopped) await sink.close();
        else started.push(startChangePublication(pool, sink, projects, log));
        return;
      } catch (err) {
        if (attempt === 0) log.warn({ err }, 'change publication to Kafka: cannot start yet; retrying');
        await sleep(START_RETRY_MS);
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      await starting;
      for (const publication of started) await publication.stop();
    },
  };
}
