import { describe, expect, test } from "bun:test";
import type { CursorPageBody } from "../../src/http/pagination";
import type { InvoiceView } from "../../src/modules/billing/invoices/model";
import type { PaymentView } from "../../src/modules/billing/payments/model";
import type { RefundView } from "../../src/modules/billing/refunds/model";
import type { Answer, Refusal, TestApp, ValidationDetails } from "../helpers/app";
import { addMember, registerClinic, relogin, type ClinicSession } from "../helpers/clinic";
import { emitted, pay, draft } from "./helpers";
import { useClinicApp } from "../helpers/fixture";

let t: TestApp;
let owner: ClinicSession;
useClinicApp((made) => ({ t, owner } = made));

const count = (table: string) => t.count(table);
const invoice = async (id: string) => (await owner.as<InvoiceView>("GET", `/api/v1/billing/invoices/${id}`)).body;
const refund = (paymentId: string, amount: unknown, headers: Record<string, string> = {}) =>
  owner.as<Answer<RefundView>>("POST", "/api/v1/billing/refunds", { json: { payment_id: paymentId, amount, reason: "error" }, headers });

describe("payments", () => {
  test("partial then full payment: the invoice becomes paid when covered", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 10_000 }]); // total 11,900
    const first = await pay(owner, inv.id, 4_000);
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ amount: 4_000, currency: "CLP", method: "card", refunded_amount: 0 });
    expect(await invoice(inv.id)).toMatchObject({ status: "emitted", paid_amount: 4_000, balance: 7_900, paid_at: null });
    const second = await pay(owner, inv.id, 7_900);
    expect(second.status, second.text).toBe(201);
    expect(await invoice(inv.id)).toMatchObject({ status: "paid", paid_amount: 11_900, balance: 0 });
    expect((await owner.as<PaymentView>("GET", `/api/v1/billing/payments/${first.body.id}`)).body).toEqual(first.body);
    const listed = await owner.as<CursorPageBody<PaymentView>>("GET", `/api/v1/billing/payments?invoice_id=${inv.id}`);
    expect(listed.body.data.map((p: { id: string }) => p.id)).toEqual([first.body.id, second.body.id]);
  });

  test("overpaying is 422 AMOUNT_EXCEEDS_BALANCE and writes nothing; so is paying a paid invoice", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]); // 1,190
    const before = await count("payments");
    const over = await pay(owner, inv.id, 1_191);
    expect(over.status, over.text).toBe(422);
    expect(over.body).toMatchObject({ code: "AMOUNT_EXCEEDS_BALANCE", details: { balance: 1_190 } });
    expect(await count("payments")).toBe(before);
    expect(await invoice(inv.id)).toMatchObject({ paid_amount: 0, status: "emitted" });
    await pay(owner, inv.id, 1_190);
    const onPaid = await pay(owner, inv.id, 1);
    expect(onPaid.status, onPaid.text).toBe(422);
    expect(onPaid.body.code).toBe("AMOUNT_EXCEEDS_BALANCE");
  });

  test("only emitted invoices take payments (a draft or void one is 409)", async () => {
    const d = await draft(owner, [{ quantity: 1, unit_price: 100 }]);
    const r = await pay(owner, d.id, 10);
    expect(r.status, r.text).toBe(409);
    await owner.as("POST", `/api/v1/billing/invoices/${d.id}/void`);
    expect((await pay(owner, d.id, 10)).status).toBe(409);
  });

  test("a float or string amount is 422; so is an unknown method", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    const before = await count("payments");
    for (const amount of [10.5, "100", 0, -5, null]) {
      const r = await pay<Refusal<ValidationDetails>>(owner, inv.id, amount);
      expect(r.status, `${JSON.stringify(amount)}: ${r.text}`).toBe(422);
      expect(r.body.details.fields.map((f: { path: string }) => f.path)).toContain("body.amount");
    }
    const method = await owner.as("POST", "/api/v1/billing/payments", { json: { invoice_id: inv.id, amount: 1, method: "bitcoin" } });
    expect(method.status).toBe(422);
    expect(await count("payments")).toBe(before);
  });

  test("concurrent payments can never overpay an invoice", async () => {
    const inv = await emitted(owner, [{ quantity: 10, unit_price: 1_000 }]); // 11,900
    const results = await Promise.all(Array.from({ length: 20 }, () => pay(owner, inv.id, 1_190)));
    expect(results.filter((r) => r.status === 201).length).toBe(10);
    expect(results.filter((r) => r.status === 422).length).toBe(10);
    expect(await invoice(inv.id)).toMatchObject({ paid_amount: 11_900, status: "paid", balance: 0 });
  });
});

describe("refunds", () => {
  test("up to what the payment has left; the payment, the invoice's paid amount and status follow", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 10_000 }]); // 11,900
    const payment = (await pay(owner, inv.id, 11_900)).body;
    expect((await invoice(inv.id)).status).toBe("paid");
    const r = await refund(payment.id, 1_900);
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ payment_id: payment.id, invoice_id: inv.id, amount: 1_900, currency: "CLP" });
    expect((await owner.as<PaymentView>("GET", `/api/v1/billing/payments/${payment.id}`)).body.refunded_amount).toBe(1_900);
    expect(await invoice(inv.id)).toMatchObject({ status: "emitted", paid_amount: 10_000, balance: 1_900, paid_at: null });

    const before = [await count("refunds"), (await invoice(inv.id)).paid_amount];
    const over = await refund(payment.id, 10_001);
    expect(over.status, over.text).toBe(422);
    expect(over.body).toMatchObject({ code: "AMOUNT_EXCEEDS_BALANCE", details: { refundable: 10_000 } });
    expect([await count("refunds"), (await invoice(inv.id)).paid_amount]).toEqual(before);

    expect((await refund(payment.id, 10_000)).status).toBe(201);
    expect(await invoice(inv.id)).toMatchObject({ paid_amount: 0, balance: 11_900, status: "emitted" });
    expect((await refund(payment.id, 1)).status).toBe(422);
    // Money back in the balance can be paid again.
    expect((await pay(owner, inv.id, 11_900)).status).toBe(201);
    expect((await invoice(inv.id)).status).toBe("paid");
  });

  test("vets and staff cannot refund (403), and nothing is written", async () => {
    const vet = await addMember(t, owner, "vet");
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    const payment = (await pay(owner, inv.id, 1_000)).body;
    const before = await count("refunds");
    const r = await vet.as("POST", "/api/v1/billing/refunds", { json: { payment_id: payment.id, amount: 10 } });
    expect(r.status, r.text).toBe(403);
    expect(await count("refunds")).toBe(before);
    expect((await vet.as("POST", "/api/v1/billing/payments", { json: { invoice_id: inv.id, amount: 190, method: "cash" } })).status).toBe(201);
  });

  test("a float or string refund amount is 422", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    const payment = (await pay(owner, inv.id, 1_000)).body;
    for (const amount of [1.5, "10"]) expect((await refund(payment.id, amount)).status).toBe(422);
  });
});

describe("idempotency", () => {
  test("50 concurrent payments with one key: exactly one payment, the rest replays or 409 in progress", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 100_000 }]);
    const key = crypto.randomUUID();
    const before = await count("payments");
    const results = await Promise.all(Array.from({ length: 50 }, () => pay(owner, inv.id, 1_000, { "idempotency-key": key })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length, JSON.stringify(statuses)).toBe(1);
    for (const r of results.filter((x) => x.status !== 201)) {
      if (r.status === 200) expect(r.headers.get("idempotent-replayed")).toBe("true");
      else {
        expect(r.status, r.text).toBe(409);
        expect(r.body.code).toBe("IDEMPOTENCY_KEY_IN_PROGRESS");
        expect(r.headers.get("retry-after")).toBeTruthy();
      }
    }
    expect(await count("payments")).toBe(before + 1);
    expect((await invoice(inv.id)).paid_amount).toBe(1_000);
    const replay = await pay(owner, inv.id, 1_000, { "idempotency-key": key });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual(results.find((r) => r.status === 201)!.body);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  });

  test("the same key with a different body is 409 IDEMPOTENCY_KEY_CONFLICT; a key that is not a UUID is 400", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 100_000 }]);
    const key = crypto.randomUUID();
    expect((await pay(owner, inv.id, 1_000, { "idempotency-key": key })).status).toBe(201);
    const before = await count("payments");
    const conflict = await pay(owner, inv.id, 2_000, { "idempotency-key": key });
    expect(conflict.status, conflict.text).toBe(409);
    expect(conflict.body.code).toBe("IDEMPOTENCY_KEY_CONFLICT");
    const bad = await pay(owner, inv.id, 1_000, { "idempotency-key": "not-a-uuid" });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.code).toBe("INVALID_IDEMPOTENCY_KEY");
    expect(await count("payments")).toBe(before);
  });

  test("failures are not stored: the same key can be retried after a 422", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    const key = crypto.randomUUID();
    expect((await pay(owner, inv.id, 999_999, { "idempotency-key": key })).status).toBe(422);
    expect((await pay(owner, inv.id, 1_190, { "idempotency-key": key })).status).toBe(201);
  });

  test("after 24 hours the key is forgotten: the same request creates anew, and expired keys are purged", async () => {
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 100_000 }]);
    const key = crypto.randomUUID();
    const first = await pay(owner, inv.id, 1_000, { "idempotency-key": key });
    t.clock.advance(24 * 3600 * 1000 + 1000);
    owner = await relogin(t, owner);
    const again = await pay(owner, inv.id, 1_000, { "idempotency-key": key });
    expect(again.status, again.text).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
    const [stale] = await t.database.query<{ n: number }>("select count(*)::int as n from idempotency_keys where expires_at <= $1", [t.clock.now().toISOString()]);
    expect(stale!.n).toBe(0);
  });

  test("keys are scoped to the clinic: another clinic's same key is independent", async () => {
    const other = await registerClinic(t);
    const key = crypto.randomUUID();
    const mine = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    const theirs = await emitted(other, [{ quantity: 1, unit_price: 1_000 }]);
    expect((await pay(owner, mine.id, 100, { "idempotency-key": key })).status).toBe(201);
    expect((await pay(other, theirs.id, 100, { "idempotency-key": key })).status).toBe(201);
  });
});

describe("clinic isolation for payments and refunds", () => {
  test("another clinic's invoice or payment is a 422 reference and nothing is written; lists show nothing", async () => {
    const other = await registerClinic(t);
    const inv = await emitted(owner, [{ quantity: 1, unit_price: 1_000 }]);
    const payment = (await pay(owner, inv.id, 100)).body;
    const before = [await count("payments"), await count("refunds")];
    const p = await pay(other, inv.id, 100);
    expect(p.status, p.text).toBe(422);
    const r = await other.as("POST", "/api/v1/billing/refunds", { json: { payment_id: payment.id, amount: 10 } });
    expect(r.status, r.text).toBe(422);
    expect([await count("payments"), await count("refunds")]).toEqual(before);
    for (const path of ["/billing/payments?limit=200", "/billing/refunds?limit=200", "/billing/invoices?limit=200"]) {
      expect((await other.as<CursorPageBody<{ id: string }>>("GET", `/api/v1${path}`)).body.data).toEqual([]);
    }
  });
});
