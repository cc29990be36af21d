import { pino } from 'pino';

export type Logger = pino.Logger;

/**
 * JSON-lines logger. Paths that could hold a secret are censored even if a caller passes a whole
 * request or record by mistake (password hashes, TOTP secrets, JWTs).
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        'headers.authorization',
        '*.headers.authorization',
        'password_hash',
        '*.password_hash',
        '*.*.password_hash',
        'secret',
        '*.secret',
        '*.*.secret',
        'token',
        '*.token',
      ],
      censor: '[REDACTED]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
