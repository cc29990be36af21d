import kafkajs, { type Admin } from 'kafkajs';
import type { KafkaTopicSettings } from '../config.js';
import type { Logger } from '../log.js';

export type { KafkaTopicSettings };

// kafkajs is CommonJS: this one is not seen as a named export by Node's ESM loader.
const { ConfigResourceTypes } = kafkajs;

/** A topic the service needs: its name, and the configs it is made with beyond the settings. */
export interface TopicSpec {
  readonly topic: string;
  readonly configs: Readonly<Record<string, string>>;
}

/**
 * Makes the topic with its partitions, replicas and configs, and waits for its leaders. A topic
 * that exists is left as it is, whoever made it: an operator may have tuned it. What differs from
 * the settings is reported (a warning naming each config), never rewritten.
 */
export async function ensureKafkaTopic(
  admin: Admin,
  spec: TopicSpec,
  settings: KafkaTopicSettings,
  log: Logger,
): Promise<void> {
  const configs = { ...spec.configs, 'min.insync.replicas': String(settings.minInsyncReplicas) };
  const created = await admin.createTopics({
    topics: [
      {
        topic: spec.topic,
        numPartitions: settings.partitions,
        replicationFactor: settings.replicationFactor,
        configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
      },
    ],
    waitForLeaders: true,
  });
  if (created) return;
  const differs = await topicDifferences(admin, spec.topic, configs, settings);
  if (differs.length > 0)
    log.warn({ topic: spec.topic, differs }, 'an existing topic differs from the settings; left as it is');
}

/** Where an existing topic differs from what the service would make: `[{name, set, wanted}]`. */
export async function topicDifferences(
  admin: Admin,
  topic: string,
  configs: Readonly<Record<string, string>>,
  settings: KafkaTopicSettings,
): Promise<{ name: string; set: string; wanted: string }[]> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: Object.keys(configs) }],
  });
  const entries = described.resources[0]?.configEntries ?? [];
  const differs = entries
    .filter((e) => configs[e.configName] !== undefined && configs[e.configName] !== e.configValue)
    .map((e) => ({ name: e.configName, set: e.configValue, wanted: configs[e.configName] as string }));
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  const partitions = metadata.topics[0]?.partitions ?? [];
  if (partitions.length !== settings.partitions)
    differs.push({ name: 'partitions', set: String(partitions.length), wanted: String(settings.partitions) });
  const replicas = partitions[0]?.replicas.length ?? 0;
  if (replicas !== settings.replicationFactor) {
    differs.push({
      name: 'replication factor',
      set: String(replicas),
      wanted: String(settings.replicationFactor),
    });
  }
  return differs;
}
