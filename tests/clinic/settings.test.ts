/** Clinic settings (issuer data for SII documents) and accounts (own password, CLI reset). */
import { describe, expect, test } from "bun:test";
import type { MeView } from "../../src/modules/auth/model";
import type { TaxDocumentView } from "../../src/modules/billing/sii/model";
import type { ClinicView } from "../../src/modules/clinic/model";
import { resetPassword } from "../../src/modules/users/service";
import type { Refusal, TestApp, ValidationDetails } from "../helpers/app";
import { addMember, PASSWORD, registerClinic, type ClinicSession } from "../helpers/clinic";
import { emitted } from "../billing/helpers";
import { makeIssuer } from "../billing/sii-fixtures";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made), { clinic: { timezone: "America/Santiago" } });

describe("GET and PATCH /clinic", () => {
  test("every role reads the settings; the owner changes them, the RUT verified and normalized", async () => {
    const staff = await addMember(t, owner, "staff");
    const read = await staff.as("GET", "/api/v1/clinic");
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ id: owner.clinic.id, timezone: "America/Santiago", currency: "CLP", tax_rate_bps: 1900, plan: "standard", rut: null });
    expect((await staff.as("PATCH", "/api/v1/clinic", { json: { giro: "x" } })).status).toBe(403);
    const patched = await owner.as("PATCH", "/api/v1/clinic", {
      json: { legal_name: "Servicios Veterinarios Los Aromos SpA", rut: "760864285", address: "Av. Los Aromos 1234, Ñuñoa", giro: "Servicios veterinarios", tax_rate_bps: 1900, timezone: "America/Punta_Arenas" },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ rut: "76.086.428-5", legal_name: "Servicios Veterinarios Los Aromos SpA", timezone: "America/Punta_Arenas" });
    expect((await owner.as<MeView>("GET", "/api/v1/auth/me")).body.clinic.rut).toBe("76.086.428-5");
  });

  test.each([
    [{ rut: "76.086.428-4" }, "body.rut"],
    [{ timezone: "Mars/Olympus" }, "body.timezone"],
    [{ tax_rate_bps: 10_001 }, "body.tax_rate_bps"],
    [{ tax_rate_bps: -1 }, "body.tax_rate_bps"],
    [{ currency: "pesos" }, "body.currency"],
    [{ plan: "enterprise" }, "body"],
    [{}, "body"],
  ])("%j is 422 naming %s, and changes nothing", async (json, field) => {
    const before = (await owner.as("GET", "/api/v1/clinic")).body;
    const r = await owner.as<Refusal<ValidationDetails>>("PATCH", "/api/v1/clinic", { json });
    if (field === "body" && "plan" in json) {
      // Unknown body properties are dropped by the schema; with nothing left to change it is 422.
      expect(r.status, r.text).toBe(422);
    } else {
      expect(r.status, r.text).toBe(422);
      expect(r.body.details.fields.map((f: { path: string }) => f.path), r.text).toContain(field);
    }
    expect((await owner.as("GET", "/api/v1/clinic")).body).toEqual(before);
  });

  test("the currency changes only while there are no money records (409 after)", async () => {
    const fresh = await registerClinic(t);
    const changed = await fresh.as<ClinicView>("PATCH", "/api/v1/clinic", { json: { currency: "USD" } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.currency).toBe("USD");
    await emitted(fresh, [{ quantity: 1, unit_price: 100 }]);
    const refused = await fresh.as("PATCH", "/api/v1/clinic", { json: { currency: "CLP" } });
    expect(refused.status, refused.text).toBe(409);
    expect((await fresh.as<ClinicView>("GET", "/api/v1/clinic")).body.currency).toBe("USD");
  });

  test("an SII document carries the issuer data of the moment it was issued", async () => {
    const clinic = await registerClinic(t);
    await makeIssuer(clinic, [39]);
    await clinic.as("PATCH", "/api/v1/clinic", { json: { legal_name: "Primera SpA", rut: "76.086.428-5", address: "Calle 1", giro: "Veterinaria" } });
    const invoice = await emitted(clinic, [{ quantity: 1, unit_price: 1000 }]);
    const doc = await clinic.as<TaxDocumentView>("POST", "/api/v1/billing/sii/documents", { json: { doc_type: 39, invoice_id: invoice.id } });
    expect(doc.status, doc.text).toBe(201);
    expect(doc.body.issuer).toEqual({ name: clinic.clinic.name, legal_name: "Primera SpA", rut: "76.086.428-5", address: "Calle 1", giro: "Veterinaria" });
    await clinic.as("PATCH", "/api/v1/clinic", { json: { legal_name: "Segunda SpA", address: "Calle 2" } });
    const again = await clinic.as<TaxDocumentView>("GET", `/api/v1/billing/sii/documents/${doc.body.id}`);
    expect(again.body.issuer.legal_name).toBe("Primera SpA");
    expect(again.body.issuer.address).toBe("Calle 1");
  });
});

describe("the clinic's language", () => {
  test("the owner sets it (es or en), audited with its before and after; other roles and other values change nothing", async () => {
    const clinic = await registerClinic(t);
    expect((await clinic.as<ClinicView>("GET", "/api/v1/clinic")).body.language).toBe("es");
    const vet = await addMember(t, clinic, "vet");
    expect((await vet.as("PATCH", "/api/v1/clinic", { json: { language: "en" } })).status).toBe(403);
    for (const language of ["fr", "EN", "", null]) {
      const refused = await clinic.as<Refusal<ValidationDetails>>("PATCH", "/api/v1/clinic", { json: { language } });
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.details.fields.map((f) => f.path)).toContain("body.language");
    }
    expect((await vet.as<ClinicView>("GET", "/api/v1/clinic")).body.language).toBe("es");
    const changed = await clinic.as<ClinicView>("PATCH", "/api/v1/clinic", { json: { language: "en" } });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.language).toBe("en");
    expect((await vet.as<ClinicView>("GET", "/api/v1/clinic")).body.language).toBe("en");
    const events = await t.database.query<{ action: string; actor_id: string; fields_before: Record<string, unknown>; fields_after: Record<string, unknown> }>(
      "select action, actor_id, fields_before, fields_after from events where entity_type = 'clinic' and entity_id = $1 and action = 'clinic.updated' order by seq",
      [clinic.clinic.id],
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ action: "clinic.updated", actor_id: clinic.user.id, fields_before: { language: "es" }, fields_after: { language: "en" } });
  });
});

describe("accounts", () => {
  test("POST /auth/password: the current password must match; other sessions end, this one stays, old refresh tokens die", async () => {
    const vet = await addMember(t, owner, "vet");
    const login = await t.request("POST", "/api/v1/auth/login", { json: { email: vet.user.email, password: PASSWORD } });
    const otherCookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const wrong = await vet.as<Refusal<ValidationDetails>>("POST", "/api/v1/auth/password", { json: { current_password: "not it at all", new_password: "a brand new password" }, headers: { cookie: vet.refreshCookie } });
    expect(wrong.status, wrong.text).toBe(422);
    expect(wrong.body.details.fields[0]!.path).toBe("body.current_password");
    const changed = await vet.as("POST", "/api/v1/auth/password", { json: { current_password: PASSWORD, new_password: "a brand new password" }, headers: { cookie: vet.refreshCookie } });
    expect(changed.status, changed.text).toBe(204);
    const other = await t.request("POST", "/api/v1/auth/refresh", { headers: { cookie: otherCookie } });
    expect(other.status, other.text).toBe(401);
    const kept = await t.request("POST", "/api/v1/auth/refresh", { headers: { cookie: vet.refreshCookie } });
    expect(kept.status, kept.text).toBe(200);
    expect((await t.request("POST", "/api/v1/auth/login", { json: { email: vet.user.email, password: PASSWORD } })).status).toBe(401);
    expect((await t.request("POST", "/api/v1/auth/login", { json: { email: vet.user.email, password: "a brand new password" } })).status).toBe(200);
  });

  test("reset-password (the CLI's service): a forgotten owner password is replaced and every session ends", async () => {
    const clinic = await registerClinic(t);
    const result = await resetPassword({ db: t.database.db, clock: t.clock }, clinic.user.email.toUpperCase(), "reset by the operator");
    expect(result.user_id).toBe(clinic.user.id);
    expect((await t.request("POST", "/api/v1/auth/refresh", { headers: { cookie: clinic.refreshCookie } })).status).toBe(401);
    expect((await t.request("POST", "/api/v1/auth/login", { json: { email: clinic.user.email, password: "reset by the operator" } })).status).toBe(200);
    await expect(resetPassword({ db: t.database.db, clock: t.clock }, "nobody@clinic.test", "whatever long")).rejects.toThrow("no user with the email");
  });
});

describe("SII issuer data", () => {
  test("PATCH /clinic takes Acteco, comuna and the SII resolution; malformed values are 422 and change nothing", async () => {
    const clinic = await registerClinic(t);
    const ok = await clinic.as<ClinicView>("PATCH", "/api/v1/clinic", { json: { economic_activity_code: "750000", commune: "Ñuñoa", sii_resolution_number: 0, sii_resolution_date: "2026-01-05" } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ economic_activity_code: "750000", commune: "Ñuñoa", sii_resolution_number: 0, sii_resolution_date: "2026-01-05" });
    for (const json of [{ economic_activity_code: "1234567" }, { economic_activity_code: "75a000" }, { commune: "x".repeat(21) }, { sii_resolution_number: -1 }, { sii_resolution_date: "2026-02-30" }, { sii_resolution_date: "05-01-2026" }]) {
      const r = await clinic.as("PATCH", "/api/v1/clinic", { json });
      expect(r.status, `${JSON.stringify(json)}: ${r.text}`).toBe(422);
    }
    expect((await clinic.as<ClinicView>("GET", "/api/v1/clinic")).body).toMatchObject({ economic_activity_code: "750000", commune: "Ñuñoa", sii_resolution_date: "2026-01-05" });
  });
});
