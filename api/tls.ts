import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generate } from 'selfsigned';
import type { ServiceConfig } from '../pipeline/config.js';

/** A certificate and its key (PEM), and the file the certificate is in (a client's CA file). */
export interface ServerTls {
  readonly cert: string;
  readonly key: string;
  readonly certFile: string;
}

/**
 * The HTTPS server's certificate: TLS_CERT_FILE and TLS_KEY_FILE when configured; on the embedded
 * default a self-signed one for localhost, made once in the data folder; otherwise none (TLS ends
 * at a proxy in front of the service).
 */
export async function serverTls(config: ServiceConfig): Promise<ServerTls | undefined> {
  const { certFile, keyFile } = config.https;
  if (certFile && keyFile) {
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8'), certFile };
  }
  if (config.databaseUrl) return undefined;
  return localhostCertificate(path.join(config.dataDir, 'tls'));
}

async function localhostCertificate(dir: string): Promise<ServerTls> {
  const certFile = path.join(dir, 'localhost.crt');
  const keyFile = path.join(dir, 'localhost.key');
  try {
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8'), certFile };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const notAfterDate = new Date();
  notAfterDate.setFullYear(notAfterDate.getFullYear() + 2);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, notAfterDate });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(keyFile, pems.private, { mode: 0o600 });
  await writeFile(certFile, pems.cert);
  return { cert: pems.cert, key: pems.private, certFile };
}
