import { eq, gte, inArray, lte } from "drizzle-orm";
import type { ServiceContext } from "../../db/client";
import { assertReferenced, clinicRecords, recordView } from "../../db/clinic-records";
import { alerts } from "../../db/schema";
import type { ListActor } from "../../http/clinic-resource";
import type { PageRequest } from "../../db/keyset";
import { dayRange } from "../../lib/time";
import { patientRecords } from "../patients/service";
import type { AlertFilters, CreateAlertInput, UpdateAlertInput } from "./model";

export const alertRecords = clinicRecords(alerts, "Alert");

export const view = (row: typeof alerts.$inferSelect) => recordView(row);

const assertPatient = (ctx: ServiceContext, clinicId: string, id: string | null | undefined) =>
  assertReferenced(ctx, clinicId, [{ field: "patient_id", id, records: patientRecords, what: "patient" }]);

export async function create(ctx: ServiceContext, clinicId: string, input: CreateAlertInput) {
  await assertPatient(ctx, clinicId, input.patient_id);
  const status = input.status ?? "active";
  return view(await alertRecords.insert(ctx, clinicId, { ...input, status, resolved_at: status === "resolved" ? ctx.clock.now() : null }));
}

/** Resolving stamps `resolved_at`; re-activating clears it. */
export async function update(ctx: ServiceContext, clinicId: string, id: string, input: UpdateAlertInput) {
  const current = await alertRecords.find(ctx, clinicId, id);
  await assertPatient(ctx, clinicId, input.patient_id);
  const changes: Record<string, unknown> = { ...input };
  if (input.status && input.status !== current.status) changes.resolved_at = input.status === "resolved" ? ctx.clock.now() : null;
  return view(await alertRecords.update(ctx, clinicId, id, changes));
}

export const remove = (ctx: ServiceContext, clinicId: string, id: string) => alertRecords.softDelete(ctx, clinicId, id);

/** Dates filter on `due_date` (a calendar date, so no time-zone arithmetic is needed). */
export function list(ctx: ServiceContext, { clinicId, timezone: timeZone }: ListActor, filters: AlertFilters, page: PageRequest) {
  dayRange(filters.date_from, filters.date_to, timeZone);
  return alertRecords.page(
    ctx,
    clinicId,
    [
      filters.status ? inArray(alerts.status, filters.status.split(",")) : undefined,
      filters.kind ? inArray(alerts.kind, filters.kind.split(",")) : undefined,
      filters.patient_id ? eq(alerts.patient_id, filters.patient_id) : undefined,
      filters.date_from ? gte(alerts.due_date, filters.date_from) : undefined,
      filters.date_to ? lte(alerts.due_date, filters.date_to) : undefined,
    ],
    page,
  );
}
