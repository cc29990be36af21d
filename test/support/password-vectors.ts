import type { FirebaseScryptParams, PasswordInput } from '../../schemas/password-formats.js';

/** Firebase's published example project parameters (github.com/firebase/scrypt, README). */
export const FIREBASE_PARAMS: FirebaseScryptParams = {
  signerKey: 'jxspr8Ki0RYycVU8zykbdLGjFQ3McFUH0uiiTvC8pVMXAn210wjLNmdZJzxUECKbm0QsEmYUSDzZvpjeJ9WmXA==',
  saltSeparator: 'Bw==',
  rounds: 8,
  memCost: 14,
};

/** Firebase's project hash parameters as `userctl import --from firebase` takes them (flags). */
export const FIREBASE_FLAGS: readonly string[] = [
  '--hash-key',
  FIREBASE_PARAMS.signerKey,
  '--salt-separator',
  FIREBASE_PARAMS.saltSeparator,
  '--rounds',
  String(FIREBASE_PARAMS.rounds),
  '--mem-cost',
  String(FIREBASE_PARAMS.memCost),
];

const hexToB64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');
const phcB64 = (hex: string) => hexToB64(hex).replace(/=+$/, '');

/**
 * Published test vectors of every import format, each as an import record's password member and
 * the plain password it was made from.
 */
export const PASSWORD_VECTORS: readonly { name: string; input: PasswordInput; plain: string }[] = [
  {
    name: 'bcrypt (Openwall crypt_blowfish test vectors)',
    input: { type: 'bcrypt', password_hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW' },
    plain: 'U*U',
  },
  {
    name: 'argon2id (reference implementation, src/test.c)',
    input: {
      type: 'argon2id',
      password_hash: '$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc',
    },
    plain: 'password',
  },
  {
    name: 'argon2i (reference implementation, src/test.c)',
    input: {
      type: 'argon2i',
      password_hash: '$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA',
    },
    plain: 'password',
  },
  {
    name: 'scrypt (RFC 7914 section 12, N=1024 r=8 p=16)',
    input: {
      type: 'scrypt',
      password_hash: `$scrypt$ln=10,r=8,p=16$${phcB64('4e61436c')}$${phcB64(
        'fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640',
      )}`,
    },
    plain: 'password',
  },
  {
    name: 'firebase_scrypt (github.com/firebase/scrypt, README)',
    input: {
      type: 'firebase_scrypt',
      password_hash:
        'lSrfV15cpx95/sZS2W9c9Kp6i/LVgQNDNC/qzrCnh1SAyZvqmZqAjTdn3aoItz+VHjoZilo78198JAdRuid5lQ==',
      salt: '42xEC+ixf3L2lw==',
    },
    plain: 'user1password',
  },
  {
    name: 'pbkdf2_sha256, PHC (RFC 7914 section 11, c=1)',
    input: {
      type: 'pbkdf2_sha256',
      password_hash: `$pbkdf2-sha256$i=1$${phcB64('73616c74')}$${phcB64(
        '55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783',
      )}`,
    },
    plain: 'passwd',
  },
  {
    name: 'pbkdf2_sha256, Django (Django 1.8 tests/auth_tests/test_hashers.py)',
    input: {
      type: 'pbkdf2_sha256',
      password_hash: 'pbkdf2_sha256$20000$seasalt$oBSd886ysm3AqYun62DOdin8YcfbU1z9cksZSuLP9r0=',
    },
    plain: 'lètmein',
  },
  {
    name: 'pbkdf2_sha256, passlib (passlib test_handlers)',
    input: {
      type: 'pbkdf2_sha256',
      password_hash: '$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ',
    },
    plain: 'password',
  },
  {
    name: 'pbkdf2_sha512, PHC (published PBKDF2-HMAC-SHA512 vector, c=1)',
    input: {
      type: 'pbkdf2_sha512',
      password_hash: `$pbkdf2-sha512$i=1$${phcB64('73616c74')}$${phcB64(
        '867f70cf1ade02cff3752599a3a53dc4af34c7a669815ae5d513554e1c8cf252c02d470a285a0501bad999bfe943c08f050235d7d68b1da55e63f73b60a57fce',
      )}`,
    },
    plain: 'password',
  },
  {
    name: 'pbkdf2_sha512, passlib (passlib test_handlers)',
    input: {
      type: 'pbkdf2_sha512',
      password_hash:
        '$pbkdf2-sha512$1212$RHY0Fr3IDMSVO/RSZyb5ow$eNLfBK.eVozomMr.1gYa17k9B7KIK25NOEshvhrSX.esqY3s.FvWZViXz4KoLlQI.BzY/YTNJOiKc5gBYFYGww',
    },
    plain: 'password',
  },
  {
    // SHA-256("abc"), FIPS 180-2 appendix B.1: salt "a" before the password "bc".
    name: 'sha256_salted, hex (FIPS 180-2 "abc")',
    input: {
      type: 'sha256_salted',
      password_hash: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      salt: 'a',
      salt_position: 'prefix',
    },
    plain: 'bc',
  },
  {
    // SHA-512("abc"), FIPS 180-2 appendix C.1: salt "c" (in hex) after the password "ab".
    name: 'sha512_salted, base64 (FIPS 180-2 "abc")',
    input: {
      type: 'sha512_salted',
      password_hash: hexToB64(
        'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
      ),
      salt: '63',
      salt_encoding: 'hex',
      salt_position: 'suffix',
    },
    plain: 'ab',
  },
  {
    // MD5("abc"), RFC 1321 appendix A.5: salt "bc" after the password "a".
    name: 'md5_salted (RFC 1321 "abc")',
    input: {
      type: 'md5_salted',
      password_hash: '900150983cd24fb0d6963f7d28e17f72',
      salt: 'bc',
      salt_position: 'suffix',
    },
    plain: 'a',
  },
];

/** One malformed hash per format: each must fail its record, and the error must name the format. */
export const MALFORMED_PASSWORDS: readonly PasswordInput[] = [
  { type: 'bcrypt', password_hash: '$2b$10$tooShort' },
  {
    type: 'argon2id',
    password_hash: '$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA',
  },
  {
    type: 'argon2i',
    password_hash: '$argon2i$v=19$m=65536,t=2$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA',
  },
  { type: 'scrypt', password_hash: '$scrypt$ln=10,r=8$TmFDbA$/bq+HJ00cgB4VucZDQHp/nxq18vII3gw53N2Y0s3MWI' },
  { type: 'firebase_scrypt', password_hash: 'lSrfV15cpx95/sZS2W9c9Kp6i', salt: '42xEC+ixf3L2lw==' },
  {
    type: 'pbkdf2_sha256',
    password_hash: 'pbkdf2_sha512$20000$seasalt$oBSd886ysm3AqYun62DOdin8YcfbU1z9cksZSuLP9r0=',
  },
  { type: 'pbkdf2_sha512', password_hash: '$pbkdf2-sha512$0$RHY0Fr3IDMSVO/RSZyb5ow$eNLfBK.eVozomMr' },
  {
    type: 'sha256_salted',
    password_hash: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015',
    salt: 'a',
    salt_position: 'prefix',
  },
  { type: 'sha512_salted', password_hash: 'ddaf35a193617aba', salt: 'c', salt_position: 'suffix' },
  { type: 'md5_salted', password_hash: '900150983cd24fb0d6963f7d28e17f72', salt: 'bc' },
];
