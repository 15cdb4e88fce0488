import { and, eq, gte, inArray, lt, sql } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { changedSince, changesKeyset, pageOf, withinDays } from "../../db/clinic-records";
import { apiKeys, clinics, mcpUsageLog, oauthConnections, quotaCounters, type UsageOutcome } from "../../db/schema";
import { ascending, keyset, type PageRequest } from "../../db/keyset";
import { newId } from "../../lib/crypto";
import { AppError } from "../../lib/errors";
import { DAY } from "../../lib/clock";
import { rfc3339, serialize, utcDay } from "../../lib/time";
import { burstFor, generateApiKey, type ApiKeyDirectory } from "./directory";
import type { CreateKeyInput, UsageFilters } from "./model";

type KeyRow = typeof apiKeys.$inferSelect;

/** Key changes reach the directory (its cache, and every instance's) through the service, whoever calls it. */
export interface KeyServiceContext extends ServiceContext {
  directory: Pick<ApiKeyDirectory, "keyChanged">;
}

async function clinicBurst(ctx: ServiceContext, clinicId: string): Promise<number> {
  const [clinic] = await ctx.db.select({ plan: clinics.plan, burst: clinics.burst_per_minute }).from(clinics).where(eq(clinics.id, clinicId));
  return burstFor(clinic!.plan, clinic!.burst);
}

/** A key with its clinic's burst cap (from the plan), as lists and reads show it. */
type KeyWithBurst = KeyRow & { burst_per_minute: number };

export const KEY_KEYSET = keyset<KeyWithBurst>("api_keys", [apiKeys.created_at, apiKeys.id]);
export const USAGE_KEYSET = keyset<typeof mcpUsageLog.$inferSelect>("mcp_usage", [mcpUsageLog.created_at, mcpUsageLog.id]);

export function keyView(row: KeyWithBurst) {
  return serialize({
    id: row.id,
    name: row.name,
    key_prefix: row.key_prefix,
    scopes: row.scopes,
    rate_limit_per_day: row.rate_limit_per_day,
    burst_per_minute: row.burst_per_minute,
    expires_at: row.expires_at,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    revoked_at: row.revoked_at,
  });
}

async function findKey(ctx: ServiceContext, clinicId: string, id: string): Promise<KeyRow> {
  const [row] = await ctx.db.select().from(apiKeys).where(and(eq(apiKeys.clinic_id, clinicId), eq(apiKeys.id, id)));
  if (!row) throw AppError.notFound("API key", id);
  return row;
}

export async function createKey(ctx: ServiceContext, clinicId: string, userId: string | null, input: CreateKeyInput) {
  const now = ctx.clock.now();
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt <= now) throw AppError.validation([{ path: "body.expires_at", message: "Must be in the future" }]);
  const secret = generateApiKey();
  const [row] = await ctx.db
    .insert(apiKeys)
    .values({
      id: newId(),
      clinic_id: clinicId,
      name: input.name.trim(),
      key_hash: secret.hash,
      key_prefix: secret.prefix,
      scopes: [...new Set(input.scopes)],
      rate_limit_per_day: input.rate_limit_per_day ?? 1000,
      expires_at: expiresAt,
      created_by: userId,
      created_at: now,
      updated_at: now,
    })
    .returning();
  return { ...keyView({ ...row!, burst_per_minute: await clinicBurst(ctx, clinicId) }), api_key: secret.value };
}

export async function listKeys(ctx: ServiceContext, clinicId: string, page: PageRequest) {
  const found = await pageOf<KeyRow>(ctx.db, apiKeys, [eq(apiKeys.clinic_id, clinicId)], page, KEY_KEYSET);
  const burst = await clinicBurst(ctx, clinicId);
  return { ...found, rows: found.rows.map((row) => ({ ...row, burst_per_minute: burst })) };
}

/** Delta sync: keys changed (created, renamed, rotated, revoked) after `since`; keys are revoked, never deleted. */
export const KEY_CHANGES = changesKeyset<KeyWithBurst>(apiKeys);
export async function keyChanges(ctx: ServiceContext, clinicId: string, since: Date, page: PageRequest) {
  const found = await changedSince<KeyRow>(ctx.db, apiKeys, clinicId, since, page, KEY_CHANGES as never);
  const burst = await clinicBurst(ctx, clinicId);
  return { ...found, rows: found.rows.map((row) => ({ ...row, burst_per_minute: burst })) };
}

export async function getKey(ctx: ServiceContext, clinicId: string, id: string) {
  return keyView({ ...(await findKey(ctx, clinicId, id)), burst_per_minute: await clinicBurst(ctx, clinicId) });
}

/** A new value for the same record: the old value stops working at once; quota counters stay. */
export async function rotateKey(ctx: KeyServiceContext, clinicId: string, id: string) {
  const current = await findKey(ctx, clinicId, id);
  if (current.revoked_at) throw new AppError("INVALID_STATE_TRANSITION", "A revoked key cannot be rotated");
  const secret = generateApiKey();
  const [row] = await ctx.db
    .update(apiKeys)
    .set({ key_hash: secret.hash, key_prefix: secret.prefix, updated_at: ctx.clock.now() })
    .where(and(eq(apiKeys.clinic_id, clinicId), eq(apiKeys.id, id)))
    .returning();
  await ctx.directory.keyChanged(id);
  return { ...keyView({ ...row!, burst_per_minute: await clinicBurst(ctx, clinicId) }), api_key: secret.value };
}

/** Revoking twice is harmless: the first revocation time is kept. */
export async function revokeKey(ctx: KeyServiceContext, clinicId: string, id: string): Promise<void> {
  const current = await findKey(ctx, clinicId, id);
  if (current.revoked_at) return;
  const now = ctx.clock.now();
  await ctx.db.update(apiKeys).set({ revoked_at: now, updated_at: now }).where(and(eq(apiKeys.clinic_id, clinicId), eq(apiKeys.id, id)));
  await ctx.directory.keyChanged(id);
}

export async function listUsage(ctx: ServiceContext, clinicId: string, timezone: string, filters: UsageFilters, page: PageRequest) {
  const conditions = [
    eq(mcpUsageLog.clinic_id, clinicId),
    filters.api_key_id ? eq(mcpUsageLog.api_key_id, filters.api_key_id) : undefined,
    filters.tool ? eq(mcpUsageLog.tool, filters.tool) : undefined,
    filters.outcome ? inArray(mcpUsageLog.outcome, filters.outcome.split(",") as UsageOutcome[]) : undefined,
    ...withinDays(mcpUsageLog.created_at, filters, timezone),
  ];
  return pageOf(ctx.db, mcpUsageLog, conditions, page, USAGE_KEYSET);
}

export const usageView = (row: typeof mcpUsageLog.$inferSelect) => {
  const { clinic_id: _clinic, ...visible } = row;
  return serialize(visible);
};

/** Calls per key and tool on one UTC day (quota days are UTC), with each key's counted quota. */
export async function usageSummary(ctx: ServiceContext, clinicId: string, date: string | undefined) {
  const day = date ?? utcDay(ctx.clock.now());
  const from = new Date(`${day}T00:00:00Z`);
  const to = new Date(from.getTime() + DAY);
  const keys = await ctx.db
    .select({ key: apiKeys, quota: quotaCounters.count })
    .from(apiKeys)
    .leftJoin(quotaCounters, and(eq(quotaCounters.api_key_id, apiKeys.id), eq(quotaCounters.day, day)))
    .where(eq(apiKeys.clinic_id, clinicId))
    .orderBy(...ascending([apiKeys.created_at, apiKeys.id]));
  // OAuth connections are principals like keys: listed after them, named by their client.
  const connections = await ctx.db
    .select({ connection: oauthConnections, quota: quotaCounters.count })
    .from(oauthConnections)
    .leftJoin(quotaCounters, and(eq(quotaCounters.api_key_id, oauthConnections.id), eq(quotaCounters.day, day)))
    .where(eq(oauthConnections.clinic_id, clinicId))
    .orderBy(...ascending([oauthConnections.created_at, oauthConnections.id]));
  const principals = [
    ...keys.map(({ key, quota }) => ({ id: key.id, name: key.name, key_prefix: key.key_prefix, rate_limit_per_day: key.rate_limit_per_day, quota })),
    ...connections.map(({ connection, quota }) => ({ id: connection.id, name: connection.client_name, key_prefix: "oauth", rate_limit_per_day: connection.rate_limit_per_day, quota })),
  ];
  const rows = await ctx.db
    .select({ keyId: mcpUsageLog.api_key_id, tool: mcpUsageLog.tool, outcome: mcpUsageLog.outcome, calls: sql<number>`count(*)::int` })
    .from(mcpUsageLog)
    .where(and(eq(mcpUsageLog.clinic_id, clinicId), gte(mcpUsageLog.created_at, from), lt(mcpUsageLog.created_at, to)))
    .groupBy(mcpUsageLog.api_key_id, mcpUsageLog.tool, mcpUsageLog.outcome);
  return {
    date: day,
    generated_at: rfc3339(ctx.clock.now()),
    keys: principals.map((key) => {
      const tools = new Map<string, { tool: string; calls: number; outcomes: Record<string, number> }>();
      for (const row of rows.filter((r) => r.keyId === key.id)) {
        const entry = tools.get(row.tool) ?? { tool: row.tool, calls: 0, outcomes: {} };
        entry.calls += Number(row.calls);
        entry.outcomes[row.outcome] = Number(row.calls);
        tools.set(row.tool, entry);
      }
      const list = [...tools.values()].sort((a, b) => a.tool.localeCompare(b.tool));
      return {
        api_key_id: key.id,
        name: key.name,
        key_prefix: key.key_prefix,
        rate_limit_per_day: key.rate_limit_per_day,
        quota_used: key.quota ?? 0,
        calls: list.reduce((sum, t) => sum + t.calls, 0),
        tools: list,
      };
    }),
  };
}

const noOutcomes = (): Record<UsageOutcome, number> => ({ ok: 0, blocked: 0, denied: 0, rate_limited: 0, error: 0 });

/** Calls per UTC day (the last `days`, today included) by outcome, and per tool, for the usage charts. */
export async function usageDaily(ctx: ServiceContext, clinicId: string, days: number, apiKeyId: string | undefined) {
  const today = new Date(`${utcDay(ctx.clock.now())}T00:00:00Z`);
  const from = new Date(today.getTime() - (days - 1) * DAY);
  const rows = await ctx.db
    .select({ day: sql<string>`to_char(${mcpUsageLog.created_at} at time zone 'UTC', 'YYYY-MM-DD')`, tool: mcpUsageLog.tool, outcome: mcpUsageLog.outcome, calls: sql<number>`count(*)::int` })
    .from(mcpUsageLog)
    .where(and(eq(mcpUsageLog.clinic_id, clinicId), gte(mcpUsageLog.created_at, from), apiKeyId ? eq(mcpUsageLog.api_key_id, apiKeyId) : undefined))
    .groupBy(sql`1`, mcpUsageLog.tool, mcpUsageLog.outcome);
  const byDay = new Map(Array.from({ length: days }, (_, i) => [utcDay(new Date(from.getTime() + i * DAY)), noOutcomes()]));
  const byTool = new Map<string, Record<UsageOutcome, number>>();
  for (const row of rows) {
    const calls = Number(row.calls);
    const day = byDay.get(row.day);
    if (day) day[row.outcome] += calls;
    const tool = byTool.get(row.tool) ?? noOutcomes();
    tool[row.outcome] += calls;
    byTool.set(row.tool, tool);
  }
  const total = (counts: Record<UsageOutcome, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    from: utcDay(from),
    to: utcDay(today),
    days: [...byDay].map(([date, counts]) => ({ date, ...counts })),
    tools: [...byTool].map(([tool, counts]) => ({ tool, calls: total(counts), ...counts })).sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool)),
  };
}
