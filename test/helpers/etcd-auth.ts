// Test harness: etcd's users and auth turned on through the etcd3 client, as docs/fleet.md's etcdctl commands do: root, and a user whose role may read and write /rq/fleet/ only.
import fs from 'node:fs';
import { Etcd3 } from 'etcd3';

/** The role and user docs/fleet.md has an operator add for rq. */
export const RQ_ROLE = 'rq';

/**
 * On the etcd at `url` (verified with the CA file `ca` over https): role `rq` granted readwrite on
 * the prefix `/rq/fleet/`, user `user` with that role and `password`, root (etcd needs one before
 * auth is on) with `rootPassword`; then auth is enabled.
 */
export async function enableEtcdAuth(url: string, ca: string | null, user: string, password: string, rootPassword: string): Promise<void> {
  const client = new Etcd3({ hosts: url, ...(ca && { credentials: { rootCertificate: fs.readFileSync(ca) } }) });
  try {
    await client.role(RQ_ROLE).create();
    await client.role(RQ_ROLE).grant({ permission: 'Readwrite', range: client.range({ prefix: '/rq/fleet/' }) });
    await client.user(user).create(password);
    await client.user(user).addRole(RQ_ROLE);
    await client.user('root').create(rootPassword);
    await client.user('root').addRole('root');
    await client.auth.authEnable();
  } finally {
    client.close();
  }
}
