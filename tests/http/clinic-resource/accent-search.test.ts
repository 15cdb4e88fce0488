/** Name search ignores accents and case, on both databases, served by the trigram index on fold_name(name). */
import { beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import type { CursorPageBody } from "../../../src/http/pagination";
import type { TutorView } from "../../../src/modules/tutors/model";
import type { TestApp } from "../../helpers/app";
import type { ClinicSession } from "../../helpers/clinic";
import { databaseKind } from "../../helpers/database";
import { useClinicApp } from "../../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
const names = ["María José González", "Ignacio Núñez", "ÁLVARO PEÑA", "Sofía Gonzalo", "100% Pérez"];

useClinicApp((made) => ({ t, owner } = made));
beforeAll(async () => {
  for (const name of names) expect((await owner.as("POST", "/api/v1/tutors", { json: { name } })).status).toBe(201);
  const tutor = (await owner.as<CursorPageBody<TutorView>>("GET", "/api/v1/tutors?q=nunez")).body.data[0]!;
  await owner.as("POST", "/api/v1/patients", { json: { tutor_id: tutor.id, name: "Ñandú", species: "bird" } });
});

const search = async (path: string, q: string) => {
  const r = await owner.as<CursorPageBody<{ name: string }>>("GET", `/api/v1/${path}?q=${encodeURIComponent(q)}`);
  expect(r.status, r.text).toBe(200);
  return r.body.data.map((row: { name: string }) => row.name).sort();
};

test.each([
  ["gonzalez", ["María José González"]],
  ["GONZÁLEZ", ["María José González"]],
  ["gonza", ["María José González", "Sofía Gonzalo"]],
  ["nunez", ["Ignacio Núñez"]],
  ["Núñez", ["Ignacio Núñez"]],
  ["alvaro pena", ["ÁLVARO PEÑA"]],
  ["maria jose", ["María José González"]],
  ["100%", ["100% Pérez"]],
  ["0% p", ["100% Pérez"]],
  ["_", []],
])("tutors: q=%s", async (q, expected) => {
  expect(await search("tutors", q)).toEqual(expected);
});

test("patients: q=nandu finds Ñandú", async () => {
  expect(await search("patients", "nandu")).toEqual(["Ñandú"]);
});

test.skipIf(databaseKind !== "postgres")("PostgreSQL serves the search from the trigram index on (clinic_id, fold_name(name))", async () => {
  // A clinic's real size: a few thousand tutors, analyzed, and the query exactly as the service sends it.
  await t.database.query(
    `insert into tutors (id, clinic_id, name, created_at, updated_at)
     select gen_random_uuid(), $1, 'Tutor ' || i || ' Rojas', now(), now() from generate_series(1, 5000) as i`,
    [owner.clinic.id],
  );
  await t.database.query("analyze tutors");
  // An index built inside the migration's transaction can carry indcheckxmin and is then skipped
  // while any older transaction of the cluster is open (other tests run beside this one).
  await t.database.query("reindex index tutors_clinic_name_trgm_idx");
  const plan = await t.database.db.execute(
    sql`explain select id from tutors where clinic_id = ${owner.clinic.id} and deleted_at is null and fold_name(name) like fold_name(${"%gonzalez%"})`,
  );
  expect(JSON.stringify(plan)).toContain("tutors_clinic_name_trgm_idx");
});
