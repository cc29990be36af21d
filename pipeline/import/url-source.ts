import { Readable } from 'node:stream';
import { type Dispatcher, request } from 'undici';
import type { WebhookConfig } from '../config.js';
import { ApiError, serviceUnavailable } from '../errors.js';
import { networkPolicy, policyDispatcher } from '../network-policy.js';

// Files an import reads from a URL of the customer's own storage (a signed URL of S3, GCS or
// Azure): under the network policy of webhooks (HTTPS, public addresses only, unless
// WEBHOOK_ALLOWED_HOSTS lists the host), redirects not followed (one could lead anywhere).

/** What a first look at a URL found: the file's size and its first bytes. */
export interface UrlProbe {
  readonly bytes: number;
  readonly head: Buffer;
}

/** Reads files by URL under the deployment's network policy. */
export interface UrlFiles {
  /** Why the URL cannot be read from here (the answer quotes no URL); undefined: it can. */
  problem(url: string): string | undefined;
  /** The file's size and first `count` bytes (a ranged GET: signed GET URLs refuse HEAD). */
  probe(url: string, count: number): Promise<UrlProbe>;
  /** The file's content as a stream. */
  open(url: string, signal?: AbortSignal): Promise<Readable>;
  /** Closes its connections. */
  close(): Promise<void>;
}

export function urlFiles(webhooks: Pick<WebhookConfig, 'allowedHosts' | 'timeoutMs'>): UrlFiles {
  const policy = networkPolicy(webhooks.allowedHosts);
  const dispatcher = policyDispatcher(policy, webhooks.timeoutMs);
  const get = async (url: string, headers: Record<string, string>, signal?: AbortSignal) => {
    const problem = policy.urlProblem(url);
    if (problem) throw new ApiError('ImportSourceRefused', `the source url ${problem}`);
    let answer: Dispatcher.ResponseData;
    try {
      answer = await request(url, {
        dispatcher,
        headers,
        headersTimeout: webhooks.timeoutMs,
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if ((err as { code?: string }).code === 'ADDRESS_NOT_ALLOWED')
        throw new ApiError(
          'ImportSourceRefused',
          'the source url resolves to an address imports may not reach',
        );
      throw serviceUnavailable('file source');
    }
    if (answer.statusCode >= 300) {
      await answer.body.dump();
      throw new ApiError('ImportSourceUnreadable', `the source url answered ${answer.statusCode}`, {
        status: answer.statusCode,
      });
    }
    return answer;
  };
  return {
    problem: (url) => policy.urlProblem(url),
    async probe(url, count) {
      const answer = await get(url, { range: `bytes=0-${count - 1}` });
      const range = /\/(\d+)$/.exec(String(answer.headers['content-range'] ?? ''));
      const length = answer.statusCode === 200 ? Number(answer.headers['content-length']) : Number.NaN;
      const bytes = range ? Number(range[1]) : length;
      const head: Buffer[] = [];
      let read = 0;
      for await (const chunk of answer.body) {
        head.push(chunk as Buffer);
        read += (chunk as Buffer).length;
        if (read >= count) break; // a store that sent it all (200): the rest is not wanted
      }
      if (!Number.isSafeInteger(bytes))
        throw new ApiError(
          'ImportSourceUnreadable',
          'the source url gives no size (Content-Range or Content-Length)',
        );
      return { bytes, head: Buffer.concat(head).subarray(0, count) };
    },
    async open(url, signal) {
      return Readable.from((await get(url, {}, signal)).body);
    },
    close: () => dispatcher.close(),
  };
}
