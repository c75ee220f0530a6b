/** `execute`: send commands to devices (the platform's own name); it implies `read`, not `write`. */
export type Privilege = 'admin' | 'write' | 'execute' | 'read';

/** A user as the REST API shows it (docs/contract.md §2 "Groups and users"). */
export interface User {
  id: string;
  userName: string;
  name: string;
  email: string;
  country: string;
  timeZone: string;
  description: string | null;
  message: string | null;
  disabled: boolean;
  disabledMessage: string | null;
  tags: Record<string, string>;
  privileges: Privilege[];
  group: string | null;
  from: string | null;
  expires: string | null;
  password: null;
  creation: string;
  modification: string;
  lastLogin: string | null;
}

export interface UserRecord {
  id: string;
  accountId: string;
  userName: string;
  name: string;
  email: string;
  country: string;
  timeZone: string;
  description: string | null;
  message: string | null;
  disabled: boolean;
  disabledMessage: string | null;
  tags: Record<string, string>;
  privileges: Privilege[];
  groupId: string | null;
  fromAt: number | null;
  expiresAt: number | null;
  passwordHash: string | null;
  apiKeyHash: string;
  keyVersion: number;
  creation: number;
  modification: number;
  lastLogin: number | null;
}

/** Who is calling: what every service call is scoped by. */
export interface Principal {
  userId: string;
  accountId: string;
  userName: string;
  privileges: ReadonlySet<Privilege>;
  /** set: the user sees only this group's devices */
  groupId: string | null;
}
