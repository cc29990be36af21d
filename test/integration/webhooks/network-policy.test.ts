import { createServer, type Server } from 'node:net';
import { expect } from 'chai';
import { fetch } from 'undici';
import { configFromDocument } from '../../../pipeline/config.js';
import { ConfigError } from '../../../pipeline/errors.js';
import { networkPolicy, policyDispatcher } from '../../../pipeline/network-policy.js';

/** A TCP server on loopback that counts the connections it was offered (and closes each). */
async function countingServer(): Promise<{ server: Server; port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, port, connections: () => connections };
}

/** What a POST through the policy's client ended with: the code of its cause, or the status. */
async function postThrough(policy: ReturnType<typeof networkPolicy>, url: string): Promise<string> {
  const dispatcher = policyDispatcher(policy, 2_000);
  try {
    const res = await fetch(url, {
      method: 'POST',
      body: '{}',
      dispatcher,
      signal: AbortSignal.timeout(5_000),
    });
    return String(res.status);
  } catch (err) {
    return String(((err as Error).cause as { code?: string } | undefined)?.code);
  } finally {
    await dispatcher.close();
  }
}

describe('network-policy: deliveries reach only the public internet, over HTTPS', () => {
  const open = networkPolicy([]);

  it('allows public unicast addresses only', () => {
    for (const address of ['8.8.8.8', '2606:4700:4700::1111', '93.184.216.34'])
      expect(open.allowsAddress(address, 'example.com'), address).to.equal(true);
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '::1',
      '169.254.169.254',
      'fe80::1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      'fc00::1',
      '100.64.0.1',
      '0.0.0.0',
      '::',
      '224.0.0.1',
      'ff02::1',
      '255.255.255.255',
      '::ffff:127.0.0.1',
      '::ffff:8.8.8.8',
      '64:ff9b::7f00:1',
      '2002:7f00:1::1',
      '192.0.2.1',
      'not an address',
    ])
      expect(open.allowsAddress(address, 'example.com'), address).to.equal(false);
  });

  it('refuses a URL that is not https, carries user info, does not parse, or names an address that is not public', () => {
    expect(open.urlProblem('https://hooks.example.com/task-events')).to.equal(undefined);
    const problems: [string, string][] = [
      ['http://hooks.example.com/x', 'must be an https:// URL'],
      ['https://user:pass@hooks.example.com/?token=t', 'must not carry user info'],
      ['http://[::1', 'is not a URL'],
      ['https://169.254.169.254/latest/meta-data', 'names an address that is not public'],
      ['https://0x7f.1/', 'names an address that is not public'],
      ['https://2130706433/', 'names an address that is not public'],
      ['https://[::ffff:127.0.0.1]/', 'names an address that is not public'],
      ['https://[::1]:8443/', 'names an address that is not public'],
      ['https://10.0.0.8/', 'names an address that is not public'],
      ['ftp://hooks.example.com/', 'must be an https:// URL'],
    ];
    for (const [url, problem] of problems) {
      expect(open.urlProblem(url), url).to.equal(problem);
      expect(problem).not.to.include(url);
    }
    const development = networkPolicy(['127.0.0.1', 'localhost', '10.1.0.0/16']);
    expect(development.urlProblem('http://127.0.0.1:3000/hooks')).to.equal(undefined);
    expect(development.urlProblem('http://LOCALHOST:3000/hooks')).to.equal(undefined);
    expect(development.urlProblem('https://10.1.2.3/hooks')).to.equal(undefined);
    expect(development.urlProblem('http://10.1.2.3/hooks'), 'http for a listed host only').to.equal(
      'must be an https:// URL',
    );
    expect(development.urlProblem('https://10.2.0.1/hooks')).to.equal('names an address that is not public');
  });

  it('refuses at start a webhook URL deliveries could never use, naming the endpoint and never the URL', () => {
    const withHook = (url: string, allowed?: string) =>
      configFromDocument({
        ...(allowed ? { webhook_allowed_hosts: allowed } : {}),
        project: {
          webhooks: [
            {
              id: 'crm',
              url,
              secret: 'a-signing-secret-of-enough-length',
              events: ['user_import.completed'],
            },
          ],
        },
      });
    for (const url of [
      'http://[::1',
      'https://u:secret-token@hooks.example.com/',
      'http://hooks.example.com/',
      'https://127.0.0.1/',
    ]) {
      let refused: unknown;
      try {
        withHook(url);
      } catch (err) {
        refused = err;
      }
      expect(refused, url).to.be.instanceOf(ConfigError);
      expect((refused as Error).message)
        .to.include('webhook crm')
        .and.not.to.include('secret-token');
    }
    expect(withHook('http://127.0.0.1:3000/hooks', '127.0.0.1').webhooks.allowedHosts).to.deep.equal([
      '127.0.0.1',
    ]);
    expect(() => withHook('https://hooks.example.com/', '10.0.0.0/99')).to.throw(
      ConfigError,
      'WEBHOOK_ALLOWED_HOSTS',
    );
  });

  it('checks the address connected to at connect time: a name or a literal that is not public opens no socket', async () => {
    const { server, port, connections } = await countingServer();
    try {
      // localhost passes the URL check (a name), and is refused when it resolves, before connecting.
      expect(await postThrough(open, `https://localhost:${port}/hooks`)).to.equal('ADDRESS_NOT_ALLOWED');
      expect(await postThrough(open, `https://127.0.0.1:${port}/hooks`)).to.equal('ADDRESS_NOT_ALLOWED');
      expect(await postThrough(open, `https://[::ffff:7f00:1]:${port}/hooks`)).to.equal(
        'ADDRESS_NOT_ALLOWED',
      );
      expect(connections(), 'no connection was opened').to.equal(0);
      // The allow-list lets a development receiver in: the connection is made (and closed by it).
      const allowed = await postThrough(networkPolicy(['localhost']), `http://localhost:${port}/hooks`);
      expect(allowed).not.to.equal('ADDRESS_NOT_ALLOWED');
      expect(connections()).to.equal(1);
    } finally {
      server.close();
    }
  });
});
