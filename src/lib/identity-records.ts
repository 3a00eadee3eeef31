// The built-in identity provider's users, clients and signing keys as plain records: what auth reads
// and the store keeps. NOTE: here because both can import lib; auth and store sit in one layer.

/** A user who gets tokens with the password grant. */
export interface IdentityUser {
  username: string;
  /** The token's `sub`. */
  sub: string;
  /** The password's hash, in the format of auth's hashSecret. */
  passwordHash: string;
  givenName?: string;
  familyName?: string;
  roles: string[];
  groups: string[];
  createdAt: number;
}

/** A client that gets tokens with the client credentials grant. */
export interface IdentityClient {
  clientId: string;
  sub: string;
  secretHash: string;
  roles: string[];
  groups: string[];
  createdAt: number;
}

/** A user or client as its tokens name it: its `sub`, with the roles and groups they carry. */
export interface IdentitySubject {
  sub: string;
  roles: string[];
  groups: string[];
}

/** A token signing key pair, its halves as JWK JSON texts. */
export interface SigningKeyRecord {
  kid: string;
  alg: string;
  privateJwk: string;
  publicJwk: string;
  createdAt: number;
}
