import { pino } from 'pino';

export type Logger = pino.Logger;

/**
 * JSON-lines logger. Paths that could hold a secret are censored even if a caller passes a whole
 * request or record by mistake (password hashes, TOTP secrets, JWTs).
 */
export function createLogger(level: string): Logger {
  return pino({
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
  });
}
