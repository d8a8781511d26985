/**
 * The system users and groups a package's maintainer scripts create (`adduser --system --group
 * postgres`, `addgroup --system ssl-cert`), added to the image's /etc/passwd and /etc/group
 * without running anything. Ids are allocated deterministically in the order given: a user and
 * its group get the first id from 100 (adduser's FIRST_SYSTEM_UID) up to 999 that is free both
 * as a uid and as a gid, so `postgres` is the same number in every build of the same packages; a
 * group alone gets the first free gid from 100.
 */
import { AgentError } from '@nodelet/base';

export interface SystemUser {
  name: string;
  home: string;
  shell: string;
  gecos: string;
  /** Supplementary groups the postinst adds the user to (`adduser postgres ssl-cert`). */
  groups?: string[];
}

export interface SystemAccounts {
  /** `adduser --system --group NAME`: a user with a group of its own name. */
  users?: SystemUser[];
  /** `addgroup --system NAME`. */
  groups?: string[];
}

const FIRST_SYSTEM_ID = 100;
const LAST_SYSTEM_ID = 999;

/** passwd and group files, and the ids in them by name. */
export interface AccountFiles {
  passwd: string;
  group: string;
}

/** Adds `accounts` to the files (groups first, then users), keeping every existing line. */
export function addSystemAccounts(files: AccountFiles, accounts: SystemAccounts): AccountFiles {
  const passwd = files.passwd.split('\n').filter(Boolean);
  const group = files.group.split('\n').filter(Boolean).map((l) => l.split(':'));
  const uids = new Set(passwd.map((l) => Number(l.split(':')[2])));
  const gids = new Set(group.map((g) => Number(g[2])));
  const free = (taken: (id: number) => boolean, what: string): number => {
    for (let id = FIRST_SYSTEM_ID; id <= LAST_SYSTEM_ID; id++) if (!taken(id)) return id;
    throw new AgentError('ERR_FAILED_PRECONDITION', `no free system id (${FIRST_SYSTEM_ID}-${LAST_SYSTEM_ID}) for ${what}`);
  };
  const hasGroup = (name: string): boolean => group.some((g) => g[0] === name);
  for (const name of accounts.groups ?? []) {
    if (hasGroup(name)) continue;
    const gid = free((id) => gids.has(id), `group "${name}"`);
    gids.add(gid);
    group.push([name, '*', String(gid), '']);
  }
  for (const u of accounts.users ?? []) {
    if (passwd.some((l) => l.startsWith(`${u.name}:`))) continue;
    if (hasGroup(u.name)) throw new AgentError('ERR_FAILED_PRECONDITION', `cannot add system user "${u.name}": a group of that name exists already`);
    const id = free((n) => uids.has(n) || gids.has(n), `user "${u.name}"`);
    uids.add(id);
    gids.add(id);
    passwd.push(`${u.name}:*:${id}:${id}:${u.gecos}:${u.home}:${u.shell}`);
    group.push([u.name, '*', String(id), '']);
    for (const g of u.groups ?? []) {
      const line = group.find((l) => l[0] === g);
      if (!line) throw new AgentError('ERR_FAILED_PRECONDITION', `cannot add "${u.name}" to group "${g}": no such group`);
      line[3] = [...(line[3] ? line[3].split(',') : []), u.name].join(',');
    }
  }
  return { passwd: passwd.map((l) => `${l}\n`).join(''), group: group.map((g) => `${g.join(':')}\n`).join('') };
}

/** The uid of user `name` and the gid of group `name` in the files. */
export function lookupIds(files: AccountFiles, user: string, group: string): { uid: number; gid: number } {
  const find = (text: string, name: string, what: string): number => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}:`));
    if (!line) throw new AgentError('ERR_NOT_FOUND', `no ${what} "${name}" in the image's /etc/${what === 'user' ? 'passwd' : 'group'}`);
    return Number(line.split(':')[2]);
  };
  return { uid: find(files.passwd, user, 'user'), gid: find(files.group, group, 'group') };
}
