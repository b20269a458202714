// rq-install: writes config/config.json, creates the runtime folders and links the built-in queues and timer.
import fs from 'node:fs/promises';
import path from 'node:path';
import { RqError, shown } from '../errors.js';
import { ADDR_EXPECTED, checkGlobalConfig, isListenAddr, isPortValue } from '../config/global-config.js';
import { readEtcdCredentials } from '../config/fleet-credentials.js';
import { browsersRefusePort } from '../config/browser-ports.js';
import { PACKAGE_DIR, resolveRoot } from '../config/root.js';
import { rootPaths } from '../config/paths.js';
import { entryExists } from '../path-exists.js';
import { closest } from '../message/nearest-name.js';
import { DirSync, mkdirDurable, writeFileDurable } from '../spool/durable.js';
import { parseArgs, takeRepeated, type OptionValue } from '../args.js';
import type { FleetConfig } from '../config/fleet-config.js';
import { FLEET_OPTIONS, FLEET_USAGE, advertisedListen, fleetFlags, fleetNotes } from './install-fleet.js';
import { type ForcedConfig, forcedConfig } from './install-config.js';

/** Linked into scandir/ in this order when their directory exists under scripts/. */
export const BUILTIN_QUEUES = ['relay', 'debug', 'cleaner', 'rq_router', 'webhook'] as const;

const KNOWN_OPTIONS = new Set(['env', 'host', 'port', 'addr', 'tmpdir', 'allow-new-queue', 'script-dir', 'force', 'root', 'help', ...FLEET_OPTIONS]);

const USAGE = `rq-install: make a directory an rq root: writes config/config.json, creates queues/, scandir/,
timers/, log/ and tmp/, and links the built-in queues (relay, debug, cleaner, rq_router, webhook)
and the cleaner timer

Usage: rq-install [--root DIR] [--env NAME] [--host HOST] [--port PORT] [--addr ADDR]
                  [--tmpdir DIR] [--allow-new-queue [--script-dir DIR]...] [--force]
                  [--fleet NAME --etcd URL[,URL...] --advertise URL [--fleet-host NAME]
                   [--etcd-ca PATH] [--etcd-cert PATH --etcd-key PATH]
                   [--etcd-user NAME --etcd-password-file PATH]]

Options:
  --root DIR         where to install (default: $RQ_ROOT, else the directory rq is installed in)
  --env NAME         the environment name given to scripts as RQ_ENV (default development)
  --host HOST        the host name in full message ids (default 127.0.0.1)
  --port PORT        the web server's port, 1-65535 but none browsers refuse (default 3333)
  --addr ADDR        the address the web server listens on (default 127.0.0.1; 0.0.0.0 for all)
  --tmpdir DIR       an existing absolute directory for uploads, on the root's file system
                     (default <root>/tmp, created)
  --allow-new-queue  let POST /new_queue and /new_queue_link create queues (off by default:
                     a queue runs its script as this user; put the web behind basic_auth)
  --script-dir DIR   a directory those queues may take their script and config from
                     (absolute or relative to the root; repeatable)
${FLEET_USAGE}
  --force            install over an existing config/config.json: the options given change
                     it, every other setting in it is kept (a file that is not valid JSON is
                     refused: correct it first)
  -h, --help         print this help and exit 0

Exit: 0 installed, 1 already installed or failed, 2 a bad command line.

Example:
  $ rq-install --root /srv/rq --env production --port 3333
  $ rq-install --root /srv/rq --fleet prod --etcd http://10.0.0.1:2379 --advertise http://10.0.0.5:3333/`;

export const NEW_QUEUE_WARNING =
  'Warning: allow_new_queue is on. Whoever can reach the web can create queues, and a queue runs its script as this user: set basic_auth in config/config.json (docs/security.md).';

export interface InstallIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

const processIo = (): InstallIo => ({
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
});

function usageError(message: string): RqError {
  return RqError.of('RQ_ERR_USAGE', message);
}

// Paths may contain spaces; names and addresses may not (they end up in URLs and listen calls). `valid`: a check of its own.
function stringOpt(opts: Record<string, OptionValue>, key: string, expected: string, isPath = false, valid = (_v: string) => true): string | undefined {
  const v = opts[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.trim() === '' || (!isPath && /\s/.test(v)) || !valid(v)) {
    throw usageError(`--${key}: expected ${expected}, received ${typeof v === 'boolean' ? 'no value' : shown(v)}`);
  }
  return v;
}

function boolOpt(opts: Record<string, OptionValue>, key: string): boolean | undefined {
  const v = opts[key];
  if (v === undefined || typeof v === 'boolean') return v;
  if (['true', 'yes', '1'].includes(v)) return true;
  if (['false', 'no', '0'].includes(v)) return false;
  throw usageError(`--${key}: expected no value (or true/false), received ${shown(v)}`);
}

export interface InstallSettings {
  root: string;
  force: boolean;
  /** config.json content, keys in the classic order. */
  config: {
    env: string;
    host: string;
    port: number;
    addr: string;
    tmpdir: string;
    allow_new_queue: boolean;
    script_dirs?: string[];
    fleet?: FleetConfig;
  };
  /** The keys of `config` the command line set: all that `--force` changes in an existing config (of a block, the fields set). */
  given: Partial<InstallSettings['config']>;
  /** Under --force, why the fleet flags alone make no fleet block: said when config.json has none to change. */
  fleetIncomplete?: RqError;
}

/** Validates the command line into what gets installed; throws RQ_ERR_USAGE with a one-line reason. */
export function installSettings(argv: readonly string[], env: NodeJS.ProcessEnv): InstallSettings {
  const repeated = takeRepeated(argv, 'script-dir');
  const { opts, rest } = parseArgs(repeated.rest, { command: false });
  if (rest.length > 0) throw usageError(`unexpected argument ${shown(rest[0])} (options are --name value)`);
  for (const key of Object.keys(opts)) {
    if (!KNOWN_OPTIONS.has(key)) {
      const near = closest(key, [...KNOWN_OPTIONS]);
      throw usageError(`unknown option --${key}${near ? `; did you mean --${near}?` : ''}`);
    }
  }

  const rootFlag = opts.root === undefined ? undefined : stringOpt(opts, 'root', 'a directory path', true);
  const root = resolveRoot(rootFlag, env);

  // A number always: classic wrote a given port as a string ("8080"), which every reader then had
  // to coerce; config readers (and jq) see the same type whether the port was given or defaulted.
  let port = 3333;
  if (opts.port !== undefined) {
    if (typeof opts.port !== 'string' || !/^\d+$/.test(opts.port) || !isPortValue(opts.port)) {
      throw usageError(`--port: expected a port number 1-65535, received ${typeof opts.port === 'boolean' ? 'no value' : shown(opts.port)}`);
    }
    port = Number(opts.port);
    if (browsersRefusePort(port))
      throw usageError(`--port: expected a port browsers will open, received ${port}, one they refuse (the Fetch standard's bad ports): choose another`);
  }

  const tmpdir = stringOpt(opts, 'tmpdir', 'an absolute directory path', true);
  if (tmpdir !== undefined && !path.isAbsolute(tmpdir)) throw usageError(`--tmpdir: expected an absolute directory path, received ${shown(tmpdir)}`);

  for (const dir of repeated.values) {
    if (dir === undefined || dir.trim() === '')
      throw usageError(`--script-dir: expected a directory path, received ${dir === undefined ? 'no value' : shown(dir)}`);
  }
  const scriptDirs = repeated.values as string[];
  const allowNewQueue = boolOpt(opts, 'allow-new-queue') ?? false;
  const force = boolOpt(opts, 'force') ?? false;
  const { fleet, incomplete: fleetIncomplete } = fleetFlags(opts, force);
  // Where the others reach this host is where it listens, unless --port or --addr say otherwise (a proxy or NAT in between).
  const listen = fleet?.advertise ? advertisedListen(fleet.advertise, opts) : {};

  const given: Partial<InstallSettings['config']> = {
    env: stringOpt(opts, 'env', 'an environment name such as development or production'),
    // In a fleet, full ids name this host as the others reach it: a ref copied from `rq sendmesg` here must point here.
    host: stringOpt(opts, 'host', 'a host name') ?? (fleet?.advertise ? new URL(fleet.advertise).hostname : undefined),
    port: opts.port === undefined ? listen.port : port,
    addr: stringOpt(opts, 'addr', ADDR_EXPECTED, false, isListenAddr) ?? listen.addr,
    tmpdir,
    allow_new_queue: boolOpt(opts, 'allow-new-queue'),
    script_dirs: scriptDirs.length > 0 ? scriptDirs : undefined,
    fleet,
  };
  for (const k of Object.keys(given) as (keyof typeof given)[]) if (given[k] === undefined) delete given[k];
  return {
    root,
    force,
    config: {
      env: 'development',
      host: '127.0.0.1',
      port,
      addr: '127.0.0.1',
      // Web uploads are hard-linked from tmpdir into the queue, so the default must sit on the
      // root's filesystem; classic's /tmp is often a tmpfs and breaks attachments.
      tmpdir: path.join(root, 'tmp'),
      allow_new_queue: allowNewQueue,
      ...given,
    },
    given,
    fleetIncomplete,
  };
}

export interface BuiltinLinks {
  root: string;
  /** Where the built-in queue directories live (<package dir>/scripts). */
  scriptsDir: string;
  /** Relative link targets (a checkout used as its own root stays movable); absolute otherwise. */
  relative: boolean;
}

async function link(target: string, at: string, relative: boolean): Promise<void> {
  await fs.symlink(relative ? path.relative(path.dirname(at), target) : target, at);
}

/** Links built-in queues into scandir/ and the cleaner timer into timers/, skipping what exists. */
export async function installBuiltins(spec: BuiltinLinks, print: (line: string) => void, dirSync: DirSync = new DirSync()): Promise<void> {
  const paths = rootPaths(spec.root);
  let linked = false;
  for (const name of BUILTIN_QUEUES) {
    const source = path.join(spec.scriptsDir, name);
    const at = path.join(paths.scandir, name);
    const stat = await fs.stat(source).catch(() => null);
    // A dangling link is still "already there" and is left alone.
    if (!stat?.isDirectory() || (await entryExists(at))) continue;
    await link(source, at, spec.relative);
    linked = true;
    print(`Installed queue ${name}`);
  }
  if (linked) await dirSync.sync(paths.scandir);

  const timer = path.join(spec.scriptsDir, 'cleaner', 'timer.json');
  const timerAt = path.join(paths.timers, 'cleaner.json');
  if ((await fs.stat(timer).catch(() => null))?.isFile() && !(await entryExists(timerAt))) {
    await link(timer, timerAt, spec.relative);
    await dirSync.sync(paths.timers);
    print('Installed timer cleaner');
  }
}

async function sameDir(a: string, b: string): Promise<boolean> {
  const real = (p: string) => fs.realpath(p).catch(() => path.resolve(p));
  return (await real(a)) === (await real(b));
}

/** Installs into the root; returns the exit code (0 ok, 1 already installed or failure, 2 usage). */
export async function main(argv: string[], io: InstallIo = processIo()): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(USAGE);
    return 0;
  }
  let settings: InstallSettings;
  try {
    settings = installSettings(argv, io.env);
  } catch (err) {
    io.stderr(`rq-install: ${(err as Error).message}`);
    return 2;
  }
  const { root } = settings;
  const paths = rootPaths(root);
  try {
    let forced: ForcedConfig<InstallSettings['config']> = { config: settings.config, kept: [], merged: [] };
    if (await entryExists(paths.configFile)) {
      if (!settings.force) {
        // The classic line on stdout, byte for byte; what it means and what to do next on stderr.
        io.stdout('Already installed');
        io.stderr(
          `rq-install: ${paths.configFile} exists, left as it is: rq-mgr start --root ${root} starts it; rq-install --force with options changes them and keeps every other setting`,
        );
        return 1;
      }
      forced = await forcedConfig(paths.configFile, settings.config, settings.given);
    }
    // Fleet flags short of a whole block change a fleet the file has; with none there, what is missing is said.
    if (settings.fleetIncomplete && !forced.merged.includes('fleet')) return (io.stderr(`rq-install: ${settings.fleetIncomplete.message}`), 2);
    const { config } = forced;
    // Against the config as it will be: an existing one may have allow_new_queue on already.
    if (config.script_dirs !== undefined && 'script_dirs' in settings.given && config.allow_new_queue !== true) {
      io.stderr('rq-install: --script-dir: only with --allow-new-queue (script dirs limit the queues the web may create)');
      return 2;
    }
    // Checked against the same schema rq-mgr loads it with, the etcd files it names read as rq-mgr reads them: never a file the daemon refuses.
    const { fleet } = checkGlobalConfig(config, 'config/config.json');
    if (fleet) await readEtcdCredentials(fleet, 'config/config.json');
    // The default <root>/tmp is made here; any other must be there already.
    const ownTmpdir = config.tmpdir === path.join(root, 'tmp');
    if (!ownTmpdir) {
      const st = await fs.stat(config.tmpdir).catch(() => null);
      if (!st?.isDirectory()) {
        io.stderr(
          `rq-install: ${'tmpdir' in settings.given ? '--tmpdir' : 'tmpdir in config/config.json'}: expected an existing directory, received ${shown(config.tmpdir)}`,
        );
        return 2;
      }
    }
    const dirSync = new DirSync();
    const dirs = [paths.queues, paths.scandir, paths.timers, paths.config, paths.log];
    if (ownTmpdir) dirs.push(config.tmpdir);
    for (const dir of dirs) {
      await mkdirDurable(dir, dirSync);
      // Whatever the installer's umask: others may not list queue names, message ids or logs (the daemons make what is inside 0750/0640).
      await fs.chmod(dir, 0o750);
    }

    // It may come to hold basic_auth passwords.
    await writeFileDurable(paths.configFile, `${JSON.stringify(config)}\n`, dirSync, undefined, 0o600);

    await installBuiltins({ root, scriptsDir: path.join(PACKAGE_DIR, 'scripts'), relative: await sameDir(root, PACKAGE_DIR) }, io.stdout, dirSync);
    io.stdout(`Installed rq in ${root} (config: ${paths.configFile})`);
    if (forced.kept.length > 0) io.stdout(`Kept from the existing config: ${forced.kept.join(', ')}`);
    if (config.allow_new_queue && !('basic_auth' in config)) io.stdout(NEW_QUEUE_WARNING);
    for (const note of fleetNotes(config)) io[note.to](note.line);
    return 0;
  } catch (err) {
    io.stderr(`rq-install: ${(err as Error).message}`);
    return 1;
  }
}
