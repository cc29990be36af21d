import { call, type Task } from './admin-api.js';

const POLL_MS = 700;

/** Reads a task's status until it is completed, telling `onProgress` of each read. */
export async function follow(path: string, onProgress: (task: Task) => void): Promise<Task> {
  for (;;) {
    const task = await call<Task>('GET', path);
    onProgress(task);
    if (task.status === 'completed') return task;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
