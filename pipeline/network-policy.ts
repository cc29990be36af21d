import { type LookupAddress, lookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector } from 'undici';

/**
 * Where the service's own outbound connections (webhook deliveries, files an import reads by URL)
 * may go: public unicast addresses only, over HTTPS, unless the deployment's allow-list
 * (WEBHOOK_ALLOWED_HOSTS: host names and CIDRs) names the host or the address, for tests and
 * development receivers. Loopback, link-local (the cloud metadata address
 * among them), private, CGNAT, unspecified, multicast, reserved, and IPv4-mapped or -embedding
 * IPv6 forms are refused.
 */
export interface NetworkPolicy {
  /** Whether a delivery to `host` may connect to `address` (one it resolved to). */
  allowsAddress(address: string, host: string): boolean;
  /** Why an endpoint URL is refused (undefined: it is allowed); the reason never quotes the URL. */
  urlProblem(url: string): string | undefined;
}

/** The policy of an allow-list: each entry a host name (any case) or a CIDR (`127.0.0.0/8`, `::1/128`). */
export function networkPolicy(allowed: readonly string[]): NetworkPolicy {
  const cidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];
  const hosts = new Set<string>();
  for (const entry of allowed) {
    if (entry.includes('/')) cidrs.push(ipaddr.parseCIDR(entry));
    else hosts.add(bare(entry).toLowerCase());
  }
  const listed = (address: ipaddr.IPv4 | ipaddr.IPv6) =>
    cidrs.some(([range, bits]) => range.kind() === address.kind() && address.match(range, bits));
  const policy: NetworkPolicy = {
    allowsAddress(address, host) {
      if (hosts.has(bare(host).toLowerCase())) return true;
      if (!ipaddr.isValid(address)) return false;
      const parsed = ipaddr.parse(address);
      return listed(parsed) || parsed.range() === 'unicast';
    },
    urlProblem(url) {
      let parsed: URL;
      try {
        // The WHATWG parser, the one the deliverer's client reads URLs with: it also turns
        // obfuscated IPv4 forms (`0x7f.1`, `2130706433`) into the address they name.
        parsed = new URL(url);
      } catch {
        return 'is not a URL';
      }
      if (parsed.username !== '' || parsed.password !== '') return 'must not carry user info';
      const host = bare(parsed.hostname);
      if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && hosts.has(host)))
        return 'must be an https:// URL';
      if (isIP(host) !== 0 && !policy.allowsAddress(host, host)) return 'names an address that is not public';
      return undefined;
    },
  };
  return policy;
}

/** A delivery's connection refused by the network policy; its message names no host or address. */
export class AddressNotAllowed extends Error {
  override readonly name = 'AddressNotAllowed';
  readonly code = 'ADDRESS_NOT_ALLOWED';
  constructor() {
    super('the endpoint resolves to an address deliveries may not reach');
  }
}

/**
 * The HTTP client of deliveries: every connection checks, at connect time, every address its
 * host resolves to (so a name that rebinds between a check and the connection cannot slip
 * through), and an IP literal itself; a refused one never opens a socket.
 */
export function policyDispatcher(policy: NetworkPolicy, connectTimeoutMs: number): Agent {
  const checkedLookup: LookupFunction = (hostname, options, callback) => {
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    lookup(hostname, { all: true, family }, (err, addresses) => {
      if (err) return callback(err, '');
      if (addresses.length === 0 || addresses.some((a) => !policy.allowsAddress(a.address, hostname)))
        return callback(new AddressNotAllowed(), '');
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
  const connector = buildConnector({ timeout: connectTimeoutMs, lookup: checkedLookup });
  return new Agent({
    connect: (options, callback) => {
      const host = bare(options.hostname);
      if (isIP(host) !== 0 && !policy.allowsAddress(host, host))
        return callback(new AddressNotAllowed(), null);
      return connector(options, callback);
    },
  });
}

/** A host without the brackets of an IPv6 literal. */
function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
