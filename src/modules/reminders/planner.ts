import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { rowsOf } from "../../db/client";
import type { ConsentChannel } from "../../db/schema";

/**
 * Writes into the outbox every reminder whose moment (the subject's moment plus the rule's offset,
 * moved out of the rule's quiet hours in the clinic's zone) falls before `horizon`, on the first
 * of the rule's channels the tutor consented to and this service can send on. The unique key
 * (clinic, rule, subject, due moment, channel) makes planning idempotent: every instance may
 * run it any number of times. A subject already reminded on another channel is left alone.
 * Resolves to how many messages it queued.
 */
export async function planReminders(database: Database, now: Date, horizon: Date, channels: ConsentChannel[]): Promise<number> {
  if (channels.length === 0) return 0;
  const nowText = now.toISOString();
  const horizonText = horizon.toISOString();
  const statement = sql`
    with rules as (
      select r.id, r.clinic_id, r.kind, r.offset_minutes, r.channels, r.quiet_start::time as qs, r.quiet_end::time as qe, c.timezone
      from reminder_rules r join clinics c on c.id = r.clinic_id
      where r.enabled and r.deleted_at is null
    ), subjects as (
      select r.*, v.id as subject_id, v.patient_id,
             (v.next_due_on::timestamp at time zone r.timezone) as due_at,
             ((v.next_due_on + 1)::timestamp at time zone r.timezone) as expires_at
      from rules r join vaccinations v on v.clinic_id = r.clinic_id
      where r.kind = 'vaccination_due' and v.deleted_at is null and v.due_closed_at is null and v.next_due_on is not null
        and v.next_due_on >= (${nowText}::timestamptz at time zone r.timezone)::date - 1
        and v.next_due_on <= ((${horizonText}::timestamptz - r.offset_minutes * interval '1 minute') at time zone r.timezone)::date + 1
      union all
      select r.*, v.id, v.patient_id, v.scheduled_at, v.scheduled_at
      from rules r join visits v on v.clinic_id = r.clinic_id
      where r.kind = 'appointment' and v.deleted_at is null and v.status = 'scheduled'
        and v.scheduled_at > ${nowText}::timestamptz and v.scheduled_at <= ${horizonText}::timestamptz - r.offset_minutes * interval '1 minute'
      union all
      select r.*, a.id, a.patient_id,
             (a.due_date::timestamp at time zone r.timezone),
             ((a.due_date + 1)::timestamp at time zone r.timezone)
      from rules r join alerts a on a.clinic_id = r.clinic_id
      where r.kind = 'follow_up' and a.kind = 'follow_up' and a.status = 'active' and a.deleted_at is null and a.patient_id is not null and a.due_date is not null
        and a.due_date >= (${nowText}::timestamptz at time zone r.timezone)::date - 1
        and a.due_date <= ((${horizonText}::timestamptz - r.offset_minutes * interval '1 minute') at time zone r.timezone)::date + 1
    ), timed as (
      select s.*, p.tutor_id, s.due_at + s.offset_minutes * interval '1 minute' as planned_at,
             ((s.due_at + s.offset_minutes * interval '1 minute') at time zone s.timezone) as local_at
      from subjects s
      join patients p on p.id = s.patient_id and p.clinic_id = s.clinic_id and p.deleted_at is null and p.deceased_on is null
      join tutors t on t.id = p.tutor_id and t.deleted_at is null and t.blocked_at is null
      where s.expires_at > ${nowText}::timestamptz and s.due_at + s.offset_minutes * interval '1 minute' <= ${horizonText}::timestamptz
    ), placed as (
      select t.*,
             case when (case when t.qs <= t.qe then t.local_at::time >= t.qs and t.local_at::time < t.qe else t.local_at::time >= t.qs or t.local_at::time < t.qe end)
                  then ((t.local_at::date + (case when t.qs > t.qe and t.local_at::time >= t.qs then 1 else 0 end)) + t.qe) at time zone t.timezone
                  else t.planned_at end as send_at
      from timed t
    )
    insert into reminder_messages (id, clinic_id, created_at, updated_at, rule_id, kind, subject_id, patient_id, tutor_id, channel, due_at, expires_at, send_at, status)
    select uuid_v7_at(${nowText}::timestamptz), p.clinic_id, ${nowText}::timestamptz, ${nowText}::timestamptz, p.id, p.kind, p.subject_id, p.patient_id, p.tutor_id, chosen.channel, p.due_at, p.expires_at, p.send_at, 'queued'
    from placed p
    cross join lateral (
      select u.channel from unnest(p.channels) with ordinality as u(channel, n)
      join tutor_consents tc on tc.tutor_id = p.tutor_id and tc.channel = u.channel and tc.purpose = 'reminders' and tc.status = 'granted'
      where u.channel = any(${sql.raw(`array[${channels.map((c) => `'${c}'`).join(",")}]::text[]`)})
      order by u.n limit 1
    ) chosen
    where not exists (
      select 1 from reminder_messages x
      where x.clinic_id = p.clinic_id and x.rule_id = p.id and x.subject_id = p.subject_id and x.due_at = p.due_at and x.status <> 'suppressed'
    )
    on conflict do nothing
    returning id`;
  const result = await database.changeContexts.run({ actor: { type: "system", id: null, name: "reminder planner" }, now: () => now }, () => database.db.transaction((tx) => tx.execute(statement)));
  return rowsOf(result).length;
}
