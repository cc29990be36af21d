// `npm run --silent admin-token`: prints an admin JWT for the running embedded default, signed with
// the development key pair under the data folder, for the public origin of the service running on
// that folder (else the configured one); valid one hour.
import { devAdminToken } from '../pipeline/development-keys.js';
import { loadConfigOrExit } from '../pipeline/lifecycle.js';

const config = loadConfigOrExit();
if (config.project.adminApi.jwks || config.adminJwksFile) {
  process.stderr.write('admin keys are configured: sign tokens with your own private key\n');
  process.exit(1);
}
process.stdout.write(`${await devAdminToken(config.dataDir, config.project.publicOrigin)}\n`);
