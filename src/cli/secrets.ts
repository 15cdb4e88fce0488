import { eq, isNotNull } from "drizzle-orm";
import type { Config } from "../config";
import type { Database, Db } from "../db/client";
import { installSettings, siiCafs, siiCertificates, webhookEndpoints } from "../db/schema";
import type { Clock } from "../lib/clock";
import { createSecretBox, secretsKeyCheck, SecretUnreadableError, type SecretBox } from "../lib/secrets";

const KEY_CHECK = "secrets_key_check";

/** A SECRETS_KEY that does not open this database's secrets: the server refuses to start with it. */
export class SecretsKeyMismatchError extends Error {
  constructor(source: string, location: string) {
    super(
      `the secrets key from ${source} does not open the secrets stored in ${location} (they were sealed with another key): ` +
        "start with the key this database was sealed with (SECRETS_KEY, or its DATA_DIR/secrets-key file), " +
        "or, holding that old key, re-seal them under this one with `vet-clinic secrets rekey --from OLD_KEY`",
    );
    this.name = "SecretsKeyMismatchError";
  }
}

const sourceOf = (config: Pick<Config, "secretsKeySource">) => config.secretsKeySource ?? "SECRETS_KEY";

/** Every sealed value in the database, and how to write it back. */
const SEALED = [
  { table: siiCafs, id: siiCafs.id, column: siiCafs.private_key_encrypted, name: "private_key_encrypted" },
  { table: siiCertificates, id: siiCertificates.clinic_id, column: siiCertificates.private_key_encrypted, name: "private_key_encrypted" },
  { table: webhookEndpoints, id: webhookEndpoints.id, column: webhookEndpoints.secret_encrypted, name: "secret_encrypted" },
  { table: webhookEndpoints, id: webhookEndpoints.id, column: webhookEndpoints.previous_secret_encrypted, name: "previous_secret_encrypted" },
] as const;

async function sealedValues(db: Db) {
  const found: { entry: (typeof SEALED)[number]; id: string; value: string }[] = [];
  for (const entry of SEALED) {
    const rows = await db.select({ id: entry.id, value: entry.column }).from(entry.table).where(isNotNull(entry.column));
    for (const row of rows) if (row.value) found.push({ entry, id: row.id, value: row.value });
  }
  return found;
}

const opens = (box: SecretBox, sealed: string) => {
  try {
    box.open(sealed);
    return true;
  } catch (error) {
    if (error instanceof SecretUnreadableError) return false;
    throw error;
  }
};

/** The key check the database keeps, if any. */
export async function storedKeyCheck(db: Db): Promise<string | undefined> {
  const [row] = await db.select({ value: installSettings.value }).from(installSettings).where(eq(installSettings.name, KEY_CHECK));
  return row?.value;
}

/**
 * At start (and before a command seals secrets): the key must be the database's. The first
 * start records the key's check (after making sure it opens any secret already stored); every
 * later start, on any instance, compares with it, so a wrong key stops the start instead of
 * failing on the first secret it meets.
 */
export async function verifySecretsKey(database: Database, config: Pick<Config, "secretsKey" | "secretsKeySource">, clock: Clock): Promise<void> {
  const check = secretsKeyCheck(config.secretsKey);
  let stored = await storedKeyCheck(database.db);
  if (stored === undefined) {
    const box = createSecretBox(config.secretsKey);
    const [sample] = await sealedValues(database.db);
    if (sample && !opens(box, sample.value)) throw new SecretsKeyMismatchError(sourceOf(config), database.location);
    await database.db.insert(installSettings).values({ name: KEY_CHECK, value: check, updated_at: clock.now() }).onConflictDoNothing();
    // Another instance may have recorded its own key first: the stored one decides.
    stored = await storedKeyCheck(database.db);
  }
  if (stored !== check) throw new SecretsKeyMismatchError(sourceOf(config), database.location);
}

/** Whether this config's key is the one the database recorded (undefined: none recorded yet). */
export async function keyMatches(database: Database, config: Pick<Config, "secretsKey">): Promise<boolean | undefined> {
  const stored = await storedKeyCheck(database.db);
  return stored === undefined ? undefined : stored === secretsKeyCheck(config.secretsKey);
}

/**
 * `secrets rekey --from OLD`: every stored secret sealed under OLD is sealed again under the
 * current key, and the key check follows, in one transaction (all or nothing). A value the
 * current key already opens is left as it is; one that neither key opens stops the whole.
 */
export async function rekeySecrets(database: Database, config: Pick<Config, "secretsKey" | "secretsKeySource">, oldKey: string, clock: Clock): Promise<{ resealed: number; already: number }> {
  if (oldKey === config.secretsKey) throw new Error(`--from is the key already in use (from ${sourceOf(config)}); pass the old key the secrets were sealed with`);
  const oldBox = createSecretBox(oldKey);
  const newBox = createSecretBox(config.secretsKey);
  return database.db.transaction(async (tx) => {
    let resealed = 0;
    let already = 0;
    const unreadable: string[] = [];
    for (const { entry, id, value } of await sealedValues(tx as unknown as Db)) {
      if (opens(newBox, value)) {
        already++;
        continue;
      }
      if (!opens(oldBox, value)) {
        unreadable.push(`${entry.name} of ${id}`);
        continue;
      }
      await tx.update(entry.table).set({ [entry.name]: newBox.seal(oldBox.open(value)) }).where(eq(entry.id, id));
      resealed++;
    }
    if (unreadable.length > 0) throw new Error(`${unreadable.length} stored secret(s) open with neither the old key nor the current one (e.g. ${unreadable[0]}); nothing was changed`);
    const check = secretsKeyCheck(config.secretsKey);
    await tx.insert(installSettings).values({ name: KEY_CHECK, value: check, updated_at: clock.now() }).onConflictDoUpdate({ target: installSettings.name, set: { value: check, updated_at: clock.now() } });
    return { resealed, already };
  });
}
