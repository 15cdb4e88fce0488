import { and, eq, lte } from "drizzle-orm";
import { Elysia, status } from "elysia";
import type { Db } from "../db/client";
import { idempotencyKeys } from "../db/schema";
import { DAY, MINUTE, type Clock } from "../lib/clock";
import { sha256Hex } from "../lib/crypto";
import { AppError } from "../lib/errors";

const KEY_TTL_MS = DAY;
/** A claim this old belongs to a request that died; a retry may take it over. */
const ABANDONED_AFTER_MS = 5 * MINUTE;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Key order must not change the fingerprint of a body. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

type Claim = { kind: "claimed" } | { kind: "replay"; body: unknown };

const inProgress = () => new AppError("IDEMPOTENCY_KEY_IN_PROGRESS", "A request with this Idempotency-Key is still running; retry shortly", undefined, { "retry-after": "1" });

/**
 * Claims `key` for this request inside the transaction `tx` that will also do the write. The
 * claim is invisible until that transaction commits, so a process that dies mid-request leaves
 * nothing behind (its transaction rolls back) and the client's retry runs fresh; a concurrent
 * duplicate waits on the key's unique index until the first commits, then replays it.
 */
async function claim(tx: Db, clock: Clock, clinicId: string, key: string, method: string, path: string, fingerprint: string): Promise<Claim> {
  const now = clock.now();
  for (let attempt = 0; attempt < 3; attempt++) {
    const inserted = await tx
      .insert(idempotencyKeys)
      .values({ clinic_id: clinicId, key, method, path, request_hash: fingerprint, state: "in_progress", created_at: now, expires_at: new Date(now.getTime() + KEY_TTL_MS) })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (inserted.length) return { kind: "claimed" };
    const [existing] = await tx.select().from(idempotencyKeys).where(and(eq(idempotencyKeys.clinic_id, clinicId), eq(idempotencyKeys.key, key)));
    if (!existing) continue; // rolled back in between: claim again
    // Claims committed as in_progress come only from versions that claimed outside the write's
    // transaction; one that old belongs to a request that died.
    const abandoned = existing.state === "in_progress" && now.getTime() - existing.created_at.getTime() > ABANDONED_AFTER_MS;
    if (existing.expires_at <= now || abandoned) {
      await tx.delete(idempotencyKeys).where(and(eq(idempotencyKeys.clinic_id, clinicId), eq(idempotencyKeys.key, key), eq(idempotencyKeys.created_at, existing.created_at)));
      continue;
    }
    if (existing.request_hash !== fingerprint) {
      throw new AppError("IDEMPOTENCY_KEY_CONFLICT", "This Idempotency-Key was used with a different request");
    }
    if (existing.state === "in_progress") throw inProgress();
    return { kind: "replay", body: existing.response_body };
  }
  throw inProgress();
}

/**
 * Idempotency for financial POSTs, as `idempotently(clinicId, body, run)` in the
 * handler: the same key, method, path and body within 24 h replays the stored 2xx body with 200
 * and `Idempotent-Replayed: true`; only successes are stored, so a failure can be retried.
 * With a key, `run` gets a transaction that also stores the response: the write and its stored
 * response commit together, so a process dying in between cannot make a retry write twice.
 */
export const idempotency = ({ db, clock }: { db: Db; clock: Clock }) =>
  new Elysia({ name: "idempotency" }).derive({ as: "global" }, ({ request, set, path }) => ({
    async idempotently<T, const Fresh extends 200 | 201 = 201>(clinicId: string, body: unknown, run: (db: Db) => Promise<T>, freshStatus: Fresh = 201 as Fresh) {
      const key = request.headers.get("idempotency-key");
      if (key === null) return status(freshStatus, await run(db));
      if (!UUID.test(key)) throw new AppError("INVALID_IDEMPOTENCY_KEY", "Idempotency-Key must be a UUID");
      const normalizedKey = key.toLowerCase();
      // Expired keys are purged as keys are used, so the table holds about a day of keys.
      await db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.clinic_id, clinicId), lte(idempotencyKeys.expires_at, clock.now())));
      const fingerprint = sha256Hex(`${request.method} ${path}\n${canonical(body)}`);
      const where = and(eq(idempotencyKeys.clinic_id, clinicId), eq(idempotencyKeys.key, normalizedKey));
      const outcome = await db.transaction(async (tx) => {
        const claimed = await claim(tx, clock, clinicId, normalizedKey, request.method, path, fingerprint);
        if (claimed.kind === "replay") return claimed;
        const fresh = await run(tx);
        await tx.update(idempotencyKeys).set({ state: "completed", response_status: freshStatus, response_body: fresh as object }).where(where);
        return { kind: "fresh" as const, body: fresh };
      });
      if (outcome.kind === "replay") {
        set.headers["idempotent-replayed"] = "true";
        return status(200, outcome.body as T);
      }
      return status(freshStatus, outcome.body);
    },
  }));
