#!/usr/bin/env node
// Users and clients of the built-in identity provider, written straight into the edgeld SQLite
// database; safe while the broker runs (WAL, busy timeout), which reads them at each token request.
// Hashes come from the broker's own compiled code (dist/auth/secret-hash.js): one format for both.
//
// Usage: node scripts/idp.mjs <db> <command> [arguments]
//   add-user <username> [--password-stdin] [--role r]... [--group g]... [--given-name n] [--family-name n] [--sub urn]
//   add-client <client-id> [--role r]... [--group g]... [--sub urn]      (prints the generated secret once)
//   list
//   remove-user <username>
//   remove-client <client-id>

import Database from 'better-sqlite3';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const USAGE = `usage: node scripts/idp.mjs <db> <command> [arguments]
  add-user <username> [--password-stdin] [--role r]... [--group g]... [--given-name n] [--family-name n] [--sub urn]
  add-client <client-id> [--role r]... [--group g]... [--sub urn]   (prints the generated secret once)
  list
  remove-user <username>
  remove-client <client-id>`;

/** Options of each command: name → whether it repeats (a list) or takes one value; flags take none. */
const OPTIONS = {
  'add-user': { role: 'list', group: 'list', 'given-name': 'one', 'family-name': 'one', sub: 'one', 'password-stdin': 'flag' },
  'add-client': { role: 'list', group: 'list', sub: 'one' },
  list: {},
  'remove-user': {},
  'remove-client': {},
};
const ARITY = { 'add-user': 1, 'add-client': 1, list: 0, 'remove-user': 1, 'remove-client': 1 };
const NAME = /^[\w.@+-]{1,128}$/;
const SUB = /^[A-Za-z][A-Za-z0-9+.-]*:\S{1,500}$/;

function fail(message, code = 1) {
  process.stderr.write(`idp: ${message}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const [db, command, ...rest] = argv;
  if (!db || !command || !(command in OPTIONS)) fail(USAGE, 2);
  const allowed = OPTIONS[command];
  const positional = [];
  const options = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    const kind = allowed[name];
    if (!kind) fail(`${command} takes no option ${arg}\n${USAGE}`, 2);
    if (kind === 'flag') {
      options[name] = true;
      continue;
    }
    const value = rest[++i];
    if (value === undefined || value === '') fail(`${arg} needs a value`, 2);
    if (kind === 'list') (options[name] ??= []).push(value);
    else if (name in options) fail(`${arg} given twice`, 2);
    else options[name] = value;
  }
  if (positional.length !== ARITY[command]) fail(USAGE, 2);
  return { db: resolve(db), command, name: positional[0], options };
}

async function loadHashing() {
  const here = dirname(fileURLToPath(import.meta.url));
  const module = join(here, '..', 'dist', 'auth', 'secret-hash.js');
  if (!existsSync(module)) fail(`${module} is missing: build edgeld first (npm run build)`);
  return import(pathToFileURL(module).href);
}

function openDatabase(path) {
  if (!existsSync(path)) fail(`${path} does not exist: start the broker once to create it`);
  const db = new Database(path, { fileMustExist: true, timeout: 5000 });
  const tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('idp_users', 'idp_clients')").pluck().get();
  if (tables !== 2) {
    db.close();
    fail(`${path} has no identity provider tables: start a broker of this version on it once`);
  }
  return db;
}

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** One line typed without echo (the terminal in raw mode); Ctrl-C aborts. */
function promptHidden(question) {
  return new Promise((resolvePrompt) => {
    const input = process.stdin;
    process.stderr.write(question);
    input.setRawMode(true);
    input.resume();
    let typed = '';
    const onData = (data) => {
      for (const ch of data.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          input.setRawMode(false);
          input.pause();
          input.off('data', onData);
          process.stderr.write('\n');
          resolvePrompt(typed);
          return;
        }
        if (ch === '\u0003') {
          input.setRawMode(false);
          process.stderr.write('\n');
          process.exit(130);
        }
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    input.on('data', onData);
  });
}

async function readPassword(fromStdin) {
  if (fromStdin) {
    // The whole of stdin, less one trailing newline (echo or a here-string adds it).
    return (await readAll(process.stdin)).replace(/\r?\n$/, '');
  }
  if (!process.stdin.isTTY) fail('no terminal to ask the password on: pass --password-stdin');
  const first = await promptHidden('Password: ');
  const second = await promptHidden('Password again: ');
  if (first !== second) fail('the passwords differ');
  return first;
}

function checkSub(sub, prefix) {
  const value = sub ?? `${prefix}${randomUUID()}`;
  if (!SUB.test(value)) fail(`--sub ${value} is not a URI`);
  return value;
}

function insert(db, sql, row, what) {
  try {
    db.prepare(sql).run(row);
  } catch (err) {
    if (err?.code === 'SQLITE_CONSTRAINT_UNIQUE') fail(`${what} already exists`);
    throw err;
  }
}

async function addUser(db, name, options) {
  if (!NAME.test(name)) fail(`username ${name}: letters, digits and . _ @ + -, at most 128`);
  const sub = checkSub(options.sub, 'urn:ngsi-ld:User:');
  const password = await readPassword(options['password-stdin'] === true);
  if (password.length < 8) fail('the password is shorter than 8 characters');
  const { hashSecret } = await loadHashing();
  insert(db, `INSERT INTO idp_users (username, sub, password_hash, given_name, family_name, roles, groups, created_at)
    VALUES (@username, @sub, @hash, @givenName, @familyName, @roles, @groups, @createdAt)`, {
    username: name, sub, hash: hashSecret(password), givenName: options['given-name'] ?? null, familyName: options['family-name'] ?? null,
    roles: JSON.stringify(options.role ?? []), groups: JSON.stringify(options.group ?? []), createdAt: Date.now(),
  }, `a user named ${name} or with sub ${sub}`);
  process.stdout.write(`user ${name} added (sub ${sub})\n`);
}

async function addClient(db, clientId, options) {
  if (!NAME.test(clientId)) fail(`client id ${clientId}: letters, digits and . _ @ + -, at most 128`);
  const sub = checkSub(options.sub, 'urn:ngsi-ld:Client:');
  const secret = randomBytes(32).toString('base64url');
  const { hashSecret } = await loadHashing();
  insert(db, `INSERT INTO idp_clients (client_id, sub, secret_hash, roles, groups, created_at)
    VALUES (@clientId, @sub, @hash, @roles, @groups, @createdAt)`, {
    clientId, sub, hash: hashSecret(secret), roles: JSON.stringify(options.role ?? []), groups: JSON.stringify(options.group ?? []), createdAt: Date.now(),
  }, `a client ${clientId} or with sub ${sub}`);
  process.stdout.write(`client ${clientId} added (sub ${sub})\nclient secret (shown only now): ${secret}\n`);
}

function list(db) {
  const lists = (r) => `roles=${JSON.parse(r.roles).join(',')} groups=${JSON.parse(r.groups).join(',')}`;
  const when = (ms) => new Date(ms).toISOString();
  for (const r of db.prepare('SELECT username, sub, given_name, family_name, roles, groups, created_at FROM idp_users ORDER BY id').iterate()) {
    const name = [r.given_name, r.family_name].filter(Boolean).join(' ');
    process.stdout.write(`user\t${r.username}\t${r.sub}\t${lists(r)}\t${name ? `name=${name}\t` : ''}created=${when(r.created_at)}\n`);
  }
  for (const r of db.prepare('SELECT client_id, sub, roles, groups, created_at FROM idp_clients ORDER BY id').iterate()) {
    process.stdout.write(`client\t${r.client_id}\t${r.sub}\t${lists(r)}\tcreated=${when(r.created_at)}\n`);
  }
}

function remove(db, table, column, value, what) {
  if (db.prepare(`DELETE FROM ${table} WHERE ${column} = ?`).run(value).changes === 0) fail(`no ${what} ${value}`);
  process.stdout.write(`${what} ${value} removed\n`);
}

async function main() {
  const { db: path, command, name, options } = parseArgs(process.argv.slice(2));
  const db = openDatabase(path);
  try {
    switch (command) {
      case 'add-user':
        return await addUser(db, name, options);
      case 'add-client':
        return await addClient(db, name, options);
      case 'list':
        return list(db);
      case 'remove-user':
        return remove(db, 'idp_users', 'username', name, 'user');
      case 'remove-client':
        return remove(db, 'idp_clients', 'client_id', name, 'client');
    }
  } finally {
    if (db.open) db.close();
  }
}

await main();
