import { type ChildProcess, spawn } from 'node:child_process';

/** What a `userctl` run printed and how it ended. */
export interface UserctlRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Starts `userctl` (the checkout's cli/main.ts) with these arguments and environment. */
export function startUserctl(
  args: readonly string[],
  env: Record<string, string> = {},
): {
  child: ChildProcess;
  done: Promise<UserctlRun>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const done = new Promise<UserctlRun>((resolve) => {
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done };
}

/** Runs `userctl` to its end. */
export function userctl(args: readonly string[], env: Record<string, string> = {}): Promise<UserctlRun> {
  return startUserctl(args, env).done;
}
