// A user's password checked against a table of users in constant time: basic_auth's users, and the fleet's own.
import { createHash, timingSafeEqual } from 'node:crypto';

// Hashing first gives equal lengths, so timingSafeEqual never leaks a length difference.
const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** True iff users[user] === password, taking the same time whether or not the user exists. */
export function checkCredentials(users: Record<string, string>, user: string, password: string): boolean {
  const known = Object.hasOwn(users, user);
  const expected = digest(known ? users[user] : `\u0000no such user ${Math.random()}`);
  return timingSafeEqual(expected, digest(password)) && known;
}
