import { createSign, type KeyObject } from "node:crypto";
import { signEnveloped, type Signer } from "./signature";
import { cut, element, escapeTedText, latin1, siiRut } from "./xml";

export const SII_NAMESPACE = "http://www.sii.cl/SiiDte";
/** The receiver of a boleta issued without one: the SII's generic RUT. */
export const ANONYMOUS_RECEIVER_RUT = "66666666-6";
/** The name a document other than a boleta gives that receiver (the DTE schema requires RznSocRecep). */
export const ANONYMOUS_RECEIVER_NAME = "Consumidor final";
export const XML_DECLARATION = `<?xml version="1.0" encoding="ISO-8859-1"?>\n`;
/** Detail lines one document holds: 60 in the DTE schema (33, 61), 1,000 in the boleta schema (39). */
export const MAX_LINES = { dte: 60, boleta: 1000 } as const;

/** A line as the invoice holds it: quantity, net unit price and net line total. A quantity of 0 is a line without amounts. */
export interface DteLine {
  description: string;
  quantity: number;
  unitPrice: number;
  total: number;
}

/** CodRef: 1 anula the referenced document, 2 corrige texto, 3 corrige montos. */
export type ReferenceCode = 1 | 2 | 3;

export interface DteContent {
  docType: 33 | 39 | 61;
  folio: number;
  /** The clinic's calendar day of issue (YYYY-MM-DD). */
  issueDate: string;
  /** The clinic's local date-time of signature (YYYY-MM-DDTHH:MM:SS), for TSTED and TmstFirma. */
  signedAt: string;
  issuer: { rut: string; legalName: string; giro: string; activityCode: string; address: string | null; commune: string | null };
  receiver: { rut: string; name: string | null; giro: string | null; address: string | null; commune: string | null };
  /** Net, IVA and total as the invoice computed them, with the IVA rate the invoice recorded. */
  amounts: { net: number; tax: number; total: number; taxRateBps: number };
  lines: DteLine[];
  /** What a 61 credits or corrects. */
  reference?: { docType: number; folio: number; date: string; code: ReferenceCode; reason: string };
}

export const documentId = (docType: number, folio: number) => `T${docType}F${folio}`;

/** A non-negative decimal held as an integer scaled by 10^6, written without trailing zeros. */
function decimal6(scaled: bigint): string {
  const whole = scaled / 1_000_000n;
  const fraction = (scaled % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : String(whole);
}

/** a / b to 6 decimals, half up, scaled by 10^6. */
const divide6 = (a: bigint, b: bigint) => (a * 2_000_000n + b) / (2n * b);

/**
 * A boleta's totals from its total, as the SII's boleta format derives them: prices include IVA,
 * MntNeto = round(MntTotal / (1 + TasaIVA)), IVA = MntTotal − MntNeto. For an invoice's total
 * (net + round(net × rate)) this gives back the invoice's own net and IVA exactly.
 */
export function boletaSplit(total: number, taxRateBps: number): { net: number; tax: number } {
  const divisor = BigInt(10_000 + taxRateBps);
  const net = Number((BigInt(total) * 20_000n + divisor) / (2n * divisor));
  return { net, tax: total - net };
}

export interface BoletaLine {
  description: string;
  quantity: number;
  /** The IVA-included unit price, to the 6 decimals the schema allows. */
  unitPrice: string;
  total: number;
}

/**
 * A boleta's lines carry IVA-included amounts. Each line's gross is its net × (1 + rate), rounded
 * down, and the pesos the total still needs go one each to the lines with the largest remainders,
 * so the lines add up to the total exactly. The unit price is that gross over the quantity to six
 * decimals, so MontoItem = round(PrcItem × QtyItem) on every line (quantities stay below 10^6).
 */
export function boletaLines(lines: DteLine[], total: number, taxRateBps: number): BoletaLine[] {
  const scale = 10_000n;
  const exact = lines.map((line) => BigInt(line.total) * (scale + BigInt(taxRateBps)));
  const gross = exact.map((value) => value / scale);
  let missing = BigInt(total) - gross.reduce((sum, value) => sum + value, 0n);
  if (missing < 0n || missing > BigInt(lines.length)) throw new Error("boletaLines: the lines do not add up to the total");
  const byRemainder = exact.map((value, index) => ({ index, remainder: value % scale })).sort((a, b) => (a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1));
  for (const { index } of byRemainder) {
    if (missing === 0n) break;
    gross[index]! += 1n;
    missing -= 1n;
  }
  return lines.map((line, index) => ({ description: line.description, quantity: line.quantity, unitPrice: decimal6(divide6(gross[index]!, BigInt(line.quantity))), total: Number(gross[index]) }));
}

/** NmbItem is one line of at most 80 characters; a longer or multi-line description goes whole in DscItem (1,000). */
function itemNames(description: string) {
  const name = cut(description.split("\n")[0], 80)!;
  return { name, detail: description === name ? null : cut(description, 1000) };
}

const detail = (lines: { description: string; quantity: number; unitPrice: string | number; total: number }[]) =>
  lines
    .map((line, index) => {
      const { name, detail } = itemNames(line.description);
      const amounts = line.quantity > 0 ? `<QtyItem>${line.quantity}</QtyItem><PrcItem>${line.unitPrice}</PrcItem>` : "";
      return `<Detalle><NroLinDet>${index + 1}</NroLinDet>${element("NmbItem", name)}${element("DscItem", detail)}${amounts}<MontoItem>${line.total}</MontoItem></Detalle>`;
    })
    .join("");

/** The TED's receiver name: the receiver's name, or (a boleta without one) its RUT, as LibreDTE writes it. */
const tedReceiverName = (content: DteContent) => cut(content.receiver.name, 40) || siiRut(content.receiver.rut);

/**
 * The TED: its `DD` flattened (no whitespace between tags) with every text in the SII's canonical
 * escaping, and its FRMT over exactly those ISO-8859-1 bytes, signed with the CAF's key.
 */
export function stamp(content: DteContent, cafXml: string, cafKey: KeyObject): string {
  const firstItem = itemNames(content.lines[0]?.description ?? "Servicios").name;
  const dd =
    `<DD><RE>${siiRut(content.issuer.rut)}</RE><TD>${content.docType}</TD><F>${content.folio}</F><FE>${content.issueDate}</FE>` +
    `<RR>${siiRut(content.receiver.rut)}</RR><RSR>${escapeTedText(tedReceiverName(content))}</RSR><MNT>${content.amounts.total}</MNT>` +
    `<IT1>${escapeTedText(cut(firstItem, 40)!)}</IT1>${cafXml}<TSTED>${content.signedAt}</TSTED></DD>`;
  const frmt = createSign("RSA-SHA1").update(latin1(dd)).sign(cafKey, "base64");
  return `<TED version="1.0">${dd}<FRMT algoritmo="SHA1withRSA">${frmt}</FRMT></TED>`;
}

/** TasaIVA as the schema writes it: a percentage with at most two decimals (19, 19.5). */
const percent = (bps: number) => String(bps / 100);

/** The unsigned `<DTE>` of a 33 or 61 (DTE schema) or a 39 (boleta schema), elements in schema order. */
export function buildDte(content: DteContent, ted: string): string {
  const { issuer, receiver, amounts } = content;
  const id = documentId(content.docType, content.folio);
  let body: string;
  if (content.docType === 39) {
    const split = boletaSplit(amounts.total, amounts.taxRateBps);
    body =
      `<Encabezado><IdDoc><TipoDTE>39</TipoDTE><Folio>${content.folio}</Folio><FchEmis>${content.issueDate}</FchEmis><IndServicio>3</IndServicio></IdDoc>` +
      `<Emisor><RUTEmisor>${siiRut(issuer.rut)}</RUTEmisor>${element("RznSocEmisor", cut(issuer.legalName, 100))}${element("GiroEmisor", cut(issuer.giro, 80))}${element("DirOrigen", cut(issuer.address, 70))}${element("CmnaOrigen", cut(issuer.commune, 20))}</Emisor>` +
      `<Receptor><RUTRecep>${siiRut(receiver.rut)}</RUTRecep>${element("RznSocRecep", cut(receiver.name, 100))}${element("DirRecep", cut(receiver.address, 70))}${element("CmnaRecep", cut(receiver.commune, 20))}</Receptor>` +
      `<Totales><MntNeto>${split.net}</MntNeto><IVA>${split.tax}</IVA><MntTotal>${amounts.total}</MntTotal></Totales></Encabezado>` +
      detail(boletaLines(content.lines, amounts.total, amounts.taxRateBps));
  } else {
    const reference = content.reference
      ? `<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>${content.reference.docType}</TpoDocRef><FolioRef>${content.reference.folio}</FolioRef><FchRef>${content.reference.date}</FchRef><CodRef>${content.reference.code}</CodRef>${element("RazonRef", cut(content.reference.reason, 90))}</Referencia>`
      : "";
    // A document without amounts (a 61 that corrects text) carries only its total, 0.
    const totals = amounts.total > 0 ? `<MntNeto>${amounts.net}</MntNeto><TasaIVA>${percent(amounts.taxRateBps)}</TasaIVA><IVA>${amounts.tax}</IVA><MntTotal>${amounts.total}</MntTotal>` : `<MntTotal>0</MntTotal>`;
    body =
      `<Encabezado><IdDoc><TipoDTE>${content.docType}</TipoDTE><Folio>${content.folio}</Folio><FchEmis>${content.issueDate}</FchEmis></IdDoc>` +
      `<Emisor><RUTEmisor>${siiRut(issuer.rut)}</RUTEmisor>${element("RznSoc", cut(issuer.legalName, 100))}${element("GiroEmis", cut(issuer.giro, 80))}<Acteco>${issuer.activityCode}</Acteco>${element("DirOrigen", cut(issuer.address, 70))}${element("CmnaOrigen", cut(issuer.commune, 20))}</Emisor>` +
      `<Receptor><RUTRecep>${siiRut(receiver.rut)}</RUTRecep>${element("RznSocRecep", cut(receiver.name ?? ANONYMOUS_RECEIVER_NAME, 100))}${element("GiroRecep", cut(receiver.giro, 40))}${element("DirRecep", cut(receiver.address, 70))}${element("CmnaRecep", cut(receiver.commune, 20))}</Receptor>` +
      `<Totales>${totals}</Totales></Encabezado>` +
      detail(content.lines) +
      reference;
  }
  return `<DTE xmlns="${SII_NAMESPACE}" version="1.0"><Documento ID="${id}">${body}${ted}<TmstFirma>${content.signedAt}</TmstFirma></Documento></DTE>`;
}

/** The signed DTE (with its XML declaration): TED with the CAF's key, then XMLDSig over the Documento with the certificate's. */
export function signedDte(content: DteContent, caf: { xml: string; key: KeyObject }, signer: Signer): { xml: string; ted: string } {
  const ted = stamp(content, caf.xml, caf.key);
  const signed = signEnveloped(buildDte(content, ted), documentId(content.docType, content.folio), signer);
  return { xml: XML_DECLARATION + signed, ted };
}

/** The clinic's local date-time (YYYY-MM-DDTHH:MM:SS) of an instant. */
export function localDateTime(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("sv-SE", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" }).format(instant).replace(" ", "T");
}
