// `npm run --silent admin-token`: prints an admin JWT for the running embedded default, signed with
// the development key pair under the data folder, for the public origin of the service running on
// that folder (else the configured one); valid one hour.
import { importJWK, SignJWT } from 'jose';
import { loadOrCreateDevKey, runningServiceOrigin } from '../api/admin-keys.js';
import { loadConfigOrExit } from '../pipeline/lifecycle.js';

const config = loadConfigOrExit();
if (config.project.adminApi.jwks || config.adminJwksFile) {
  process.stderr.write('admin keys are configured: sign tokens with your own private key\n');
  process.exit(1);
}
const jwk = await loadOrCreateDevKey(config.dataDir);
const key = await importJWK(jwk, 'RS256');
const token = await new SignJWT({})
  .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(jwk.kid ? { kid: jwk.kid } : {}) })
  .setAudience((await runningServiceOrigin(config.dataDir)) ?? config.project.publicOrigin)
  .setSubject('admin')
  .setIssuedAt()
  .setExpirationTime('1h')
  .sign(key);
process.stdout.write(`${token}\n`);
