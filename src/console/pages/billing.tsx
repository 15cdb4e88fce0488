/** @jsxImportSource preact */
import { useMemo, useState } from "preact/hooks";
import { invoiceTotals, lineTotal } from "../../lib/money";
import { ApiError, newIdempotencyKey, type Page } from "../api";
import { Field, useAction, useClinic, useConsole, useLoad } from "../ui";
import { InvoiceTable } from "./tutors";

interface Item {
  description: string;
  quantity: number;
  unit_price: number;
}
interface Invoice {
  id: string;
  tutor_id: string;
  visit_id: string | null;
  status: string;
  currency: string;
  items?: Item[];
  net_amount: number;
  tax_amount: number;
  total_amount: number;
  paid_amount: number;
  balance: number;
  created_at: string;
  emitted_at: string | null;
}
interface Payment {
  id: string;
  amount: number;
  refunded_amount: number;
  method: string;
  paid_at: string;
}
interface TaxDocument {
  id: string;
  doc_type: number;
  folio: number;
  receiver_name: string | null;
  issued_at: string;
  environment: string | null;
  signed: boolean;
}

const STATUSES = ["draft", "emitted", "paid", "void", "credited"];
const METHODS = ["cash", "card", "transfer", "other"];

export function BillingPage() {
  const { api, i18n } = useConsole();
  const [status, setStatus] = useState("");
  const invoices = useLoad(() => api.get<Page<Invoice>>("/billing/invoices", { status, order: "desc", limit: 100 }), [status]);
  return (
    <section aria-labelledby="billing-title">
      <div class="title-row">
        <h1 id="billing-title">{i18n.t("billing.title")}</h1>
        <Field label={i18n.t("common.status")}>
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">{i18n.t("billing.all")}</option>
            {STATUSES.map((s) => (
              <option value={s}>{i18n.label("invoiceStatus", s)}</option>
            ))}
          </select>
        </Field>
      </div>
      <InvoiceTable rows={invoices.data?.data ?? []} />
    </section>
  );
}

/** `#/invoices/new?tutor=…&visit=…` starts a draft; `#/invoices/{id}` shows one. */
export function InvoicePage({ id }: { id: string }) {
  const { api, i18n } = useConsole();
  const invoice = useLoad(() => (id === "new" ? Promise.resolve(null) : api.get<Invoice>(`/billing/invoices/${id}`)), [id]);
  if (id !== "new" && !invoice.data) return <p aria-busy="true">{i18n.t("common.loading")}</p>;
  const current = invoice.data ?? null;
  return (
    <section aria-labelledby="invoice-title">
      <h1 id="invoice-title">
        {i18n.t("billing.invoice")} {current && <span class={`badge ${current.status}`}>{i18n.label("invoiceStatus", current.status)}</span>}
      </h1>
      {current && <SaleHeading invoice={current} />}
      {!current || current.status === "draft" ? <DraftEditor key={current?.id ?? "new"} invoice={current} onSaved={invoice.reload} /> : <InvoiceSummary invoice={current} />}
      {current && current.status !== "draft" && <Payments invoice={current} onChanged={invoice.reload} />}
      {current && (current.status === "emitted" || current.status === "paid" || current.status === "credited") && <Documents invoice={current} />}
      {current && current.status === "emitted" && current.paid_amount === 0 && <VoidWithCreditNote invoice={current} onVoided={invoice.reload} />}
    </section>
  );
}

/**
 * Voids an emitted invoice without payments; a sale with a factura or boleta is voided with its
 * nota de crédito, which the API issues in the same transaction.
 */
function VoidWithCreditNote({ invoice, onVoided }: { invoice: Invoice; onVoided: () => void }) {
  const { api, i18n } = useConsole();
  const { busy, run } = useAction();
  return (
    <div class="actions">
      <button type="button" class="secondary" disabled={busy} onClick={() => run(() => api.post(`/billing/invoices/${invoice.id}/void`, { issue_credit_note: true }, newIdempotencyKey())).then(onVoided)}>
        {i18n.t("billing.voidWithCreditNote")}
      </button>
    </div>
  );
}

/** Who the sale is for, when it was made and from which visit. */
function SaleHeading({ invoice }: { invoice: Invoice }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const tutor = useLoad(() => api.get<{ id: string; name: string }>(`/tutors/${invoice.tutor_id}`), [invoice.tutor_id]);
  return (
    <dl class="facts" data-testid="sale-heading">
      <div>
        <dt>{i18n.t("sale.tutor")}</dt>
        <dd>{tutor.data ? <a href={`#/tutors/${invoice.tutor_id}`}>{tutor.data.name}</a> : "…"}</dd>
      </div>
      <div>
        <dt>{i18n.t("sale.date")}</dt>
        <dd>{i18n.dateTime(invoice.emitted_at ?? invoice.created_at, clinic.timezone)}</dd>
      </div>
      <div>
        <dt>{i18n.t("sale.status")}</dt>
        <dd>{i18n.label("invoiceStatus", invoice.status)}</dd>
      </div>
      {invoice.visit_id && (
        <div>
          <dt>{i18n.t("sale.visit")}</dt>
          <dd>
            <a href={`#/visits/${invoice.visit_id}`}>{i18n.t("record.visit")}</a>
          </dd>
        </div>
      )}
    </dl>
  );
}

/** Items with live totals, computed by the same money module the API uses. */
function DraftEditor({ invoice, onSaved }: { invoice: Invoice | null; onSaved: () => void }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const params = new URLSearchParams(location.hash.split("?")[1] ?? "");
  const [items, setItems] = useState<Item[]>(invoice?.items?.map(({ description, quantity, unit_price }) => ({ description, quantity, unit_price })) ?? [{ description: params.get("reason") || "Consulta", quantity: 1, unit_price: 0 }]);
  const [emitKey] = useState(newIdempotencyKey);
  const { busy, run } = useAction();
  const currency = invoice?.currency ?? clinic.currency;
  const totals = useMemo(() => {
    try {
      return invoiceTotals(items, clinic.tax_rate_bps);
    } catch {
      return null;
    }
  }, [items, clinic.tax_rate_bps]);
  const update = (index: number, change: Partial<Item>) => setItems(items.map((item, i) => (i === index ? { ...item, ...change } : item)));
  const save = async () => {
    if (invoice) return api.patch<Invoice>(`/billing/invoices/${invoice.id}`, { items });
    const created = await api.post<Invoice>("/billing/invoices", { tutor_id: params.get("tutor"), visit_id: params.get("visit") || null, items }, newIdempotencyKey());
    location.hash = `#/invoices/${created.id}`;
    return created;
  };
  const emit = () => run(async () => {
    await save();
    if (invoice) await api.post(`/billing/invoices/${invoice.id}/emit`, undefined, emitKey);
    onSaved();
  });
  return (
    <form
      class="card"
      onSubmit={(event) => {
        event.preventDefault();
        run(save, i18n.t("common.saved")).then(onSaved);
      }}
      aria-label={i18n.t("billing.items")}
    >
      <table class="items">
        <thead>
          <tr>
            <th scope="col">{i18n.t("billing.description")}</th>
            <th scope="col">{i18n.t("billing.quantity")}</th>
            <th scope="col">{i18n.t("billing.unitPrice")}</th>
            <th scope="col" class="num">
              {i18n.t("billing.lineTotal")}
            </th>
            <th scope="col">
              <span class="visually-hidden">{i18n.t("common.actions")}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {items.map((item, index) => (
            <tr>
              <td>
                <input aria-label={`${i18n.t("billing.description")} ${index + 1}`} name="description" required maxLength={300} value={item.description} onInput={(e) => update(index, { description: e.currentTarget.value })} />
              </td>
              <td>
                <input aria-label={`${i18n.t("billing.quantity")} ${index + 1}`} name="quantity" type="number" min={1} step={1} required value={item.quantity} onInput={(e) => update(index, { quantity: Math.trunc(Number(e.currentTarget.value)) })} />
              </td>
              <td>
                <input aria-label={`${i18n.t("billing.unitPrice")} ${index + 1}`} name="unit_price" type="number" min={0} step={1} required value={item.unit_price} onInput={(e) => update(index, { unit_price: Math.trunc(Number(e.currentTarget.value)) })} />
              </td>
              <td class="num">{i18n.money(lineTotal(item.quantity || 0, item.unit_price || 0), currency)}</td>
              <td>
                <button type="button" class="secondary" disabled={items.length === 1} onClick={() => setItems(items.filter((_, i) => i !== index))}>
                  {i18n.t("billing.removeItem")}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" class="secondary" onClick={() => setItems([...items, { description: "", quantity: 1, unit_price: 0 }])}>
        {i18n.t("billing.addItem")}
      </button>
      {totals && <Totals currency={currency} net={totals.net_amount} tax={totals.tax_amount} total={totals.total_amount} />}
      <div class="actions">
        <button type="submit" class="secondary" disabled={busy}>
          {i18n.t("billing.saveDraft")}
        </button>
        {invoice && (
          <button type="button" disabled={busy} onClick={emit}>
            {i18n.t("billing.emit")}
          </button>
        )}
      </div>
    </form>
  );
}

function Totals(props: { currency: string; net: number; tax: number; total: number; paid?: number; balance?: number }) {
  const { i18n } = useConsole();
  const rows: [string, number | undefined][] = [
    [i18n.t("billing.net"), props.net],
    [i18n.t("billing.tax"), props.tax],
    [i18n.t("billing.total"), props.total],
    [i18n.t("billing.paid"), props.paid],
    [i18n.t("billing.balance"), props.balance],
  ];
  return (
    <dl class="totals">
      {rows
        .filter(([, value]) => value !== undefined)
        .map(([label, value]) => (
          <div data-total={label}>
            <dt>{label}</dt>
            <dd>{i18n.money(value!, props.currency)}</dd>
          </div>
        ))}
    </dl>
  );
}

function InvoiceSummary({ invoice }: { invoice: Invoice }) {
  const { i18n } = useConsole();
  return (
    <div class="card">
      <ul class="plain">
        {invoice.items?.map((item) => (
          <li>
            {item.quantity} × {item.description} — {i18n.money(lineTotal(item.quantity, item.unit_price), invoice.currency)}
          </li>
        ))}
      </ul>
      <Totals currency={invoice.currency} net={invoice.net_amount} tax={invoice.tax_amount} total={invoice.total_amount} paid={invoice.paid_amount} balance={invoice.balance} />
    </div>
  );
}

/**
 * Payments of the invoice and the form to record one. Each attempt carries its own
 * Idempotency-Key, kept until the attempt is answered: a double click sends the same key
 * twice and the API records one payment.
 */
function Payments({ invoice, onChanged }: { invoice: Invoice; onChanged: () => void }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const owner = api.session.value?.user.role === "owner";
  const payments = useLoad(() => api.get<Page<Payment>>("/billing/payments", { invoice_id: invoice.id, limit: 100 }), [invoice.id, invoice.paid_amount]);
  const [amount, setAmount] = useState(invoice.balance);
  const [method, setMethod] = useState("cash");
  const [attemptKey, setAttemptKey] = useState(newIdempotencyKey);
  const { run } = useAction();
  const pay = async (event: Event) => {
    event.preventDefault();
    const ok = await run(async () => {
      try {
        await api.post("/billing/payments", { invoice_id: invoice.id, amount, method }, attemptKey);
      } catch (error) {
        // The same attempt sent twice (a double click): the first one is being recorded.
        if (error instanceof ApiError && error.code === "IDEMPOTENCY_KEY_IN_PROGRESS") return;
        throw error;
      }
    });
    if (ok) {
      setAttemptKey(newIdempotencyKey());
      onChanged();
    }
  };
  const refund = (payment: Payment) => {
    const left = payment.amount - payment.refunded_amount;
    return run(() => api.post("/billing/refunds", { payment_id: payment.id, amount: left }, newIdempotencyKey())).then(onChanged);
  };
  return (
    <section class="card" aria-labelledby="payments-title">
      <h2 id="payments-title">{i18n.t("billing.payments")}</h2>
      <table>
        <tbody>
          {payments.data?.data.map((payment) => (
            <tr data-payment-id={payment.id}>
              <td>{i18n.dateTime(payment.paid_at, clinic.timezone)}</td>
              <td>{i18n.label("method", payment.method)}</td>
              <td class="num">{i18n.money(payment.amount, invoice.currency)}</td>
              <td class="num">{payment.refunded_amount ? `${i18n.t("billing.refunded")} ${i18n.money(payment.refunded_amount, invoice.currency)}` : ""}</td>
              <td>
                {owner && payment.refunded_amount < payment.amount && (
                  <button type="button" class="secondary" onClick={() => refund(payment)}>
                    {i18n.t("billing.refund")}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {invoice.status === "emitted" && invoice.balance > 0 && (
        <form onSubmit={pay} class="inline">
          <Field label={i18n.t("billing.amount")}>
            <input name="amount" type="number" min={1} max={invoice.balance} step={1} required value={amount} onInput={(e) => setAmount(Math.trunc(Number(e.currentTarget.value)))} />
          </Field>
          <Field label={i18n.t("billing.method")}>
            <select name="method" value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
              {METHODS.map((m) => (
                <option value={m}>{i18n.label("method", m)}</option>
              ))}
            </select>
          </Field>
          <button type="submit">{i18n.t("billing.pay")}</button>
        </form>
      )}
    </section>
  );
}

/** The invoice's boleta or factura (one per invoice), with a form to issue it. */
function Documents({ invoice }: { invoice: Invoice }) {
  const { api, i18n } = useConsole();
  const clinic = useClinic();
  const documents = useLoad(() => api.get<Page<TaxDocument>>("/billing/sii/documents", { invoice_id: invoice.id }), [invoice.id]);
  const [receiver, setReceiver] = useState({ rut: "", name: "", giro: "", address: "", commune: "" });
  const { busy, run } = useAction();
  const issue = (body: Record<string, unknown>) => run(() => api.post("/billing/sii/documents", { invoice_id: invoice.id, ...body }, newIdempotencyKey())).then(documents.reload);
  const issued = documents.data?.data ?? [];
  return (
    <section class="card" aria-labelledby="documents-title">
      <h2 id="documents-title">{i18n.t("billing.documents")}</h2>
      <ul class="plain">
        {issued.map((doc) => (
          <li data-doc-type={doc.doc_type}>
            {i18n.label("docType", doc.doc_type)} · {i18n.t("billing.folio")} {doc.folio} · {i18n.dateTime(doc.issued_at, clinic.timezone)}
            {doc.environment && doc.environment !== "production" && <> · {i18n.label("environment", doc.environment)} ({i18n.t("billing.noLegalValue")})</>}
            {doc.signed && (
              <span class="actions">
                <button type="button" class="secondary" onClick={() => run(() => api.open(`/billing/sii/documents/${doc.id}/pdf`, { format: doc.doc_type === 39 ? "thermal" : "letter" }))}>
                  {i18n.t(doc.doc_type === 39 ? "billing.pdfThermal" : "billing.pdfLetter")}
                </button>
                <button type="button" class="secondary" onClick={() => run(() => api.open(`/billing/sii/documents/${doc.id}/pdf`, { format: doc.doc_type === 39 ? "letter" : "thermal" }))}>
                  {i18n.t(doc.doc_type === 39 ? "billing.pdfLetter" : "billing.pdfThermal")}
                </button>
                <button type="button" class="secondary" onClick={() => run(() => api.open(`/billing/sii/documents/${doc.id}/xml`))}>
                  {i18n.t("billing.xml")}
                </button>
                <button type="button" class="secondary" onClick={() => run(() => api.open(`/billing/sii/documents/${doc.id}/envelope`))}>
                  {i18n.t("billing.envelope")}
                </button>
              </span>
            )}
          </li>
        ))}
      </ul>
      {!issued.some((d) => d.doc_type === 33 || d.doc_type === 39) && invoice.status !== "credited" && (
        <div class="actions">
          <button type="button" disabled={busy} onClick={() => issue({ doc_type: 39 })}>
            {i18n.t("issue.39")}
          </button>
          <form
            class="inline"
            onSubmit={(event) => {
              event.preventDefault();
              issue({
                doc_type: 33,
                receiver_rut: receiver.rut,
                receiver_name: receiver.name,
                ...Object.fromEntries(([["receiver_giro", receiver.giro], ["receiver_address", receiver.address], ["receiver_commune", receiver.commune]] as const).filter(([, value]) => value.trim() !== "")),
              });
            }}
          >
            <Field label={i18n.t("billing.receiverRut")}>
              <input name="receiver_rut" required value={receiver.rut} onInput={(e) => setReceiver({ ...receiver, rut: e.currentTarget.value })} />
            </Field>
            <Field label={i18n.t("billing.receiverName")}>
              <input name="receiver_name" required value={receiver.name} onInput={(e) => setReceiver({ ...receiver, name: e.currentTarget.value })} />
            </Field>
            <Field label={i18n.t("billing.receiverGiro")}>
              <input name="receiver_giro" required maxLength={40} value={receiver.giro} onInput={(e) => setReceiver({ ...receiver, giro: e.currentTarget.value })} />
            </Field>
            <Field label={i18n.t("billing.receiverAddress")}>
              <input name="receiver_address" required maxLength={70} value={receiver.address} onInput={(e) => setReceiver({ ...receiver, address: e.currentTarget.value })} />
            </Field>
            <Field label={i18n.t("billing.receiverCommune")}>
              <input name="receiver_commune" required maxLength={20} value={receiver.commune} onInput={(e) => setReceiver({ ...receiver, commune: e.currentTarget.value })} />
            </Field>
            <button type="submit" class="secondary" disabled={busy}>
              {i18n.t("issue.33")}
            </button>
          </form>
        </div>
      )}
    </section>
  );
}
