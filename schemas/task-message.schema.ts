/** The message of the task bus: which task has work to do. Keyed by task id on Kafka. */
export const taskMessageSchema = {
  $id: 'task-message',
  type: 'object',
  additionalProperties: false,
  required: ['task_id', 'kind'],
  properties: {
    task_id: { type: 'string', pattern: '^user(import|export)_[A-Z2-7]{32}$' },
    kind: { enum: ['import', 'export'] },
  },
} as const;
