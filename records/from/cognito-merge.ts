import { cognitoIdentities, isExternalUser } from './cognito.js';

/** What becomes of a Cognito user once its social twins are known. */
export type CognitoPlace =
  /** Sent as a record, with the OAuth connections of the social users merged into it. */
  | { readonly identities: readonly Record<string, unknown>[] }
  /** Not sent: its connection goes with the user at that position. */
  | { readonly mergedInto: number };

const emailOf = (row: Readonly<Record<string, unknown>>) =>
  typeof row.email === 'string' && row.email.trim() !== '' ? row.email.trim().toLowerCase() : undefined;

/**
 * The social users of a Cognito file (`Google_<sub>`, each a user of its own) merged by email into
 * one user: into the user of the same email who signs in with a password when there is one, else
 * into the first social user of that email. Built from a first reading of the file; it holds each
 * user's email, and each social user's connections.
 */
export class CognitoMerge {
  private readonly native = new Map<string, number>();
  private readonly social = new Map<string, { first: number; identities: Record<string, unknown>[] }>();

  constructor(private readonly aliases: Readonly<Record<string, string>>) {}

  /** Notes one user of the first reading, at its position in the file. */
  add(position: number, row: Readonly<Record<string, unknown>>): void {
    const email = emailOf(row);
    if (email === undefined) return;
    if (!isExternalUser(row)) {
      if (!this.native.has(email)) this.native.set(email, position);
      return;
    }
    const twins = this.social.get(email) ?? { first: position, identities: [] };
    twins.identities.push(...cognitoIdentities(row, this.aliases).identities);
    this.social.set(email, twins);
  }

  /** Where a user of the second reading goes. */
  placeOf(position: number, row: Readonly<Record<string, unknown>>): CognitoPlace {
    const email = emailOf(row);
    const twins = email === undefined ? undefined : this.social.get(email);
    const native = email === undefined ? undefined : this.native.get(email);
    if (!isExternalUser(row)) {
      return { identities: twins && native === position ? twins.identities : [] };
    }
    if (native !== undefined) return { mergedInto: native };
    if (twins && twins.first !== position) return { mergedInto: twins.first };
    return { identities: twins?.identities ?? [] };
  }
}
