import { parseArgs } from "node:util";
import pkg from "../../package.json";
import { loadConfig } from "../config";
import type { Database } from "../db/client";
import { systemClock } from "../lib/clock";
import { serve } from "./serve";
import { INFO_OPTIONS } from "./info-options";
import { withDatabase, type EarlyStart } from "./with-database";

const HELP = `vet-clinic ${pkg.version}: practice management for small veterinary clinics

Usage: vet-clinic [command] [options]

Commands:
  serve                      Start the service (default)
  migrate                    Apply database migrations and exit
  seed --demo [--size S] [--replace]
                             Create the demo clinic (S: small, default, or large: ~1M visits)
                             and print its logins and an MCP key; run again, it reuses the demo
                             clinic with new passwords and a new key (--replace: delete it and
                             create it anew)
  demo                       Seed the demo clinic as above, then serve, printing its logins
                             once the server is listening
  create-owner --email E --name N --clinic C [--password P] [--timezone TZ] [--currency CUR]
                             Create a clinic and its owner (password also from OWNER_PASSWORD)
  reset-password --email E   Set a new password for a user (from NEW_PASSWORD, or one line on
                             standard input) and end all of their sessions
  admin grant|revoke EMAIL   Make a user an install administrator (backups, invitations: the
                             whole install), or no longer one; the last one is kept
  backup                     Write a backup of the embedded database to BACKUP_DIR now (while
                             the server runs, use POST /api/v1/admin/backups instead)
  restore FILE [--force]     Check a backup and load it into an empty DATA_DIR (--force: move the
                             database there aside first), or into the empty DATABASE_URL
  move --to URL              Copy the embedded database into an empty PostgreSQL database,
                             verified table by table, and print the DATABASE_URL to use
  move --from URL [--force]  Copy a PostgreSQL database into DATA_DIR (for local work)
  secrets rekey --from OLD   Seal every stored secret (CAF keys, the certificate's key, webhook
                             secrets) again under the current SECRETS_KEY, given the old key they
                             were sealed with; all or nothing. Stop the servers first

Options:
  -h, --help                 Show this help
  -v, --version              Show the version

Environment (docs/configuration.md describes each):
  Database     DATABASE_URL (unset: embedded database in DATA_DIR/pg; memory://; postgres://…),
               DATABASE_DIRECT_URL (a session connection beside a transaction-mode pooler),
               DATA_DIR (./data), DATABASE_POOL_SIZE (10), QUERY_POOL_SIZE (4)
  Listener     PORT (3000), HOST (0.0.0.0), PUBLIC_URL (the address clients use; required
               with NODE_ENV=production), TRUSTED_PROXIES (proxies whose X-Forwarded-Proto and
               X-Forwarded-For are believed: IPs or CIDRs),
               CORS_ORIGINS, MCP_ALLOWED_ORIGINS, MAX_BODY_BYTES (1048576), LOG_LEVEL (info)
  Secrets      JWT_SECRET, SECRETS_KEY (both generated into DATA_DIR unless given; required
               with NODE_ENV=production; SECRETS_KEY is checked against the database at start),
               COOKIE_SECURE (auto: Secure when the browser speaks https; true; false)
  Accounts     REGISTRATION (closed: clinics come from the setup link, create-owner or the demo;
               open: anyone may register a clinic; invite: with an administrator's invitation)
  MCP          QUOTA_FLUSH_MS (2000), QUERY_TIMEOUT_MS (5000), QUERY_MAX_ROWS (1000),
               QUERY_MAX_COST (1000000)
  SII          SII_TEST_CAF_KEYS (a PEM file of extra trusted CAF keys, for tests)
  Backups      BACKUP_DIR (DATA_DIR/backups), BACKUP_INTERVAL (daily; off, hourly, weekly, 6h…),
               BACKUP_KEEP (7)
  Audit        EVENTS_RETENTION_DAYS (unset: events kept forever)
  Webhooks     WEBHOOK_RETRY_SCHEDULE (0s,5s,5m,30m,2h,5h,10h,14h,20h,24h), WEBHOOK_TIMEOUT_MS
               (15000), WEBHOOK_ALLOWED_NETWORKS, WEBHOOK_DISPATCHER (on; off),
               WEBHOOK_DUE_DAYS (7), WEBHOOK_DUE_HOUR (8), WEBHOOK_MAX_ENDPOINTS (20)
  Reminders    SMTP_URL, MAIL_FROM (e-mail); WHATSAPP_TOKEN, WHATSAPP_PHONE_NUMBER_ID,
               WHATSAPP_API_URL (https://graph.facebook.com/v23.0), WHATSAPP_APP_SECRET,
               WHATSAPP_VERIFY_TOKEN (WhatsApp); REMINDER_DISPATCHER (on; off),
               REMINDER_RETRY_SCHEDULE (1m,5m,30m,2h,6h), REMINDER_TIMEOUT_MS (15000)
  Memory       MEMORY_SOFT_LIMIT_MB (384; 0: never)
  NODE_ENV     production: secrets and PUBLIC_URL must be given, webhook URLs must be https

First run: with no account in the database, the server prints a one-time setup link
(/setup#…, valid 1 hour) that creates the clinic, its owner and the install's administrator.`;

/** One line from standard input (a prompt goes to stderr when it is a terminal). */
async function readPasswordLine(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("New password (10–256 characters): ");
  for await (const line of console) return line.trim();
  throw new Error("no password given: set NEW_PASSWORD or write it on standard input");
}

/** One command line for the binary and `bun run`: `vet-clinic [serve|migrate|seed|create-owner]`. */
export async function runCli(argv: string[], { compiledPostgres }: EarlyStart = {}): Promise<void> {
  /** The configured database, migrated, for one command (with the compile src/index.ts started). */
  const withConfiguredDatabase = <T>(work: (database: Database) => Promise<T>): Promise<T> => withDatabase({ ...loadConfig(), migrate: true, compiledPostgres }, work);
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...INFO_OPTIONS,
      demo: { type: "boolean" },
      size: { type: "string" },
      replace: { type: "boolean" },
      email: { type: "string" },
      name: { type: "string" },
      clinic: { type: "string" },
      password: { type: "string" },
      timezone: { type: "string" },
      currency: { type: "string" },
      force: { type: "boolean" },
      to: { type: "string" },
      from: { type: "string" },
    },
  });
  const command = positionals[0] ?? "serve";
  if (values.help) return void console.log(HELP);
  if (values.version) return void console.log(pkg.version);
  switch (command) {
    case "serve":
      return serve({ compiledPostgres });
    case "migrate":
      return withConfiguredDatabase(async (database) => console.log(`migrations applied to ${database.location}`));
    case "seed": {
      if (!values.demo) throw new Error("seed needs --demo");
      const size = values.size ?? "small";
      if (size !== "small" && size !== "large") throw new Error("--size must be small or large");
      const { demoBlock, seedDemo } = await import("./seed");
      const { verifySecretsKey } = await import("./secrets");
      return withConfiguredDatabase(async (database) => {
        await verifySecretsKey(database, loadConfig(), systemClock);
        const result = await seedDemo(database, systemClock, size, { replace: values.replace === true, secretsKey: loadConfig().secretsKey });
        console.log(`${demoBlock(result)}\nData: ${database.location}; ${Object.entries(result.counts).map(([table, n]) => `${n} ${table}`).join(", ")}`);
      });
    }
    case "demo": {
      const { demoBlock, seedDemo } = await import("./seed");
      const { verifySecretsKey } = await import("./secrets");
      const result = await withConfiguredDatabase(async (database) => {
        // The demo seals a test CAF and certificate: under the database's own key, or not at all.
        await verifySecretsKey(database, loadConfig(), systemClock);
        return seedDemo(database, systemClock, "small", { replace: values.replace === true, secretsKey: loadConfig().secretsKey });
      });
      // Printed after "listening", so the logins sit above the request log instead of scrolling away.
      return serve({ onListening: (baseUrl) => console.log(demoBlock(result, baseUrl)), compiledPostgres });
    }
    case "create-owner": {
      const password = values.password ?? process.env.OWNER_PASSWORD;
      if (!values.email || !values.name || !values.clinic || !password) throw new Error("create-owner needs --email, --name, --clinic and --password (or OWNER_PASSWORD)");
      const { createOwner } = await import("./create-owner");
      return withConfiguredDatabase(async (database) => {
        const owner = await createOwner({ db: database.db, clock: systemClock }, { email: values.email!, name: values.name!, clinic_name: values.clinic!, password, timezone: values.timezone, currency: values.currency });
        console.log(JSON.stringify({ msg: "owner created", ...owner }, null, 2));
      });
    }
    case "reset-password": {
      if (!values.email) throw new Error("reset-password needs --email");
      if (values.password) throw new Error("reset-password takes the password from NEW_PASSWORD or standard input, never from the command line (it would land in the shell history)");
      const password = process.env.NEW_PASSWORD ?? (await readPasswordLine());
      if (password.length < 10 || password.length > 256) throw new Error("the new password must be 10–256 characters");
      const { resetPassword } = await import("../modules/users/service");
      return withConfiguredDatabase(async (database) => {
        const result = await resetPassword({ db: database.db, clock: systemClock }, values.email!, password);
        console.log(JSON.stringify({ msg: "password reset; every session of the user has ended", ...result }));
      });
    }
    case "admin": {
      const [, action, email] = positionals;
      if ((action !== "grant" && action !== "revoke") || !email) throw new Error("admin needs grant or revoke and an EMAIL: admin grant owner@clinic.cl");
      const { setInstallAdmin } = await import("../modules/users/service");
      return withConfiguredDatabase(async (database) => {
        const result = await setInstallAdmin({ db: database.db, clock: systemClock }, email, action === "grant");
        console.log(JSON.stringify({ msg: action === "grant" ? "install administrator granted" : "install administrator revoked", ...result }));
      });
    }
    case "secrets": {
      if (positionals[1] !== "rekey" || !values.from) throw new Error("secrets needs rekey --from OLD_KEY: secrets rekey --from OLD_KEY");
      const { rekeySecrets } = await import("./secrets");
      const config = loadConfig();
      return withConfiguredDatabase(async (database) => {
        const { resealed, already } = await rekeySecrets(database, config, values.from!, systemClock);
        console.log(JSON.stringify({ msg: "stored secrets sealed under the current key", resealed, already_current: already, key_from: config.secretsKeySource }));
      });
    }
    case "backup": {
      const { backupCommand, secretsKeyNote } = await import("./data");
      const config = loadConfig();
      const taken = await backupCommand(config, systemClock, { compiledPostgres });
      console.log(`backup written: ${taken.file} (${taken.size_bytes} bytes, sha256 ${taken.sha256}) in ${config.backup.dir}`);
      return void console.log(secretsKeyNote(config, "backup"));
    }
    case "restore": {
      const file = positionals[1];
      if (!file) throw new Error("restore needs a FILE (a .sql.gz backup)");
      const { restoreCommand } = await import("./data");
      return void console.log(await restoreCommand(loadConfig(), systemClock, file, values.force === true, { compiledPostgres }));
    }
    case "move": {
      const { moveCommand } = await import("./data");
      return void console.log(await moveCommand(loadConfig(), systemClock, { to: values.to, from: values.from }, values.force === true, { compiledPostgres }));
    }
    default:
      throw new Error(`unknown command "${command}"; see --help`);
  }
}
