import { createSign, type KeyObject } from "node:crypto";
import { signEnveloped, type Signer } from "./signature";
import { cut, element, escapeXml, latin1, siiRut } from "./xml";

export const SII_NAMESPACE = "http://www.sii.cl/SiiDte";
/** The receiver of a boleta issued without one: the SII's generic RUT. */
export const ANONYMOUS_RECEIVER_RUT = "66666666-6";
export const XML_DECLARATION = `<?xml version="1.0" encoding="ISO-8859-1"?>\n`;

export interface DteLine {
  description: string;
  quantity: number;
  unitPrice: number;
  total: number;
}

export interface DteContent {
  docType: 33 | 39 | 61;
  folio: number;
  /** The clinic's calendar day of issue (YYYY-MM-DD). */
  issueDate: string;
  /** The clinic's local date-time of signature (YYYY-MM-DDTHH:MM:SS), for TSTED and TmstFirma. */
  signedAt: string;
  issuer: { rut: string; legalName: string; giro: string; activityCode: string; address: string | null; commune: string | null };
  receiver: { rut: string; name: string | null; giro: string | null; address: string | null; commune: string | null };
  amounts: { net: number; tax: number; total: number; taxRateBps: number };
  lines: DteLine[];
  /** What a 61 credits. */
  reference?: { docType: number; folio: number; date: string; reason: string };
}

export const documentId = (docType: number, folio: number) => `T${docType}F${folio}`;

/**
 * A boleta's lines carry prices with IVA included: each line's gross is its net plus its share of
 * the tax, the last line taking the rounding so the lines add up to the total exactly.
 */
function grossLines(lines: DteLine[], amounts: DteContent["amounts"]): DteLine[] {
  let remaining = amounts.total;
  return lines.map((line, index) => {
    const gross = index === lines.length - 1 ? remaining : Math.round((line.total * (10_000 + amounts.taxRateBps)) / 10_000);
    remaining -= gross;
    return { ...line, unitPrice: Math.round((line.unitPrice * (10_000 + amounts.taxRateBps)) / 10_000), total: gross };
  });
}

const detail = (lines: DteLine[]) =>
  lines
    .map((line, index) => `<Detalle><NroLinDet>${index + 1}</NroLinDet>${element("NmbItem", cut(line.description, 80))}<QtyItem>${line.quantity}</QtyItem><PrcItem>${line.unitPrice}</PrcItem><MontoItem>${line.total}</MontoItem></Detalle>`)
    .join("");

/** The TED's `DD` in the SII's canonical form (no whitespace between tags) and its FRMT, signed with the CAF's key. */
export function stamp(content: DteContent, cafXml: string, cafKey: KeyObject): string {
  const firstItem = content.lines[0]?.description ?? "Servicios";
  const dd =
    `<DD><RE>${siiRut(content.issuer.rut)}</RE><TD>${content.docType}</TD><F>${content.folio}</F><FE>${content.issueDate}</FE>` +
    `<RR>${siiRut(content.receiver.rut)}</RR><RSR>${escapeXml(cut(content.receiver.name ?? "Sin receptor", 40)!)}</RSR><MNT>${content.amounts.total}</MNT>` +
    `<IT1>${escapeXml(cut(firstItem, 40)!)}</IT1>${cafXml}<TSTED>${content.signedAt}</TSTED></DD>`;
  const frmt = createSign("RSA-SHA1").update(latin1(dd)).sign(cafKey, "base64");
  return `<TED version="1.0">${dd}<FRMT algoritmo="SHA1withRSA">${frmt}</FRMT></TED>`;
}

/** The unsigned `<DTE>` of a 33 or 61 (DTE schema) or a 39 (boleta schema), elements in schema order. */
export function buildDte(content: DteContent, ted: string): string {
  const { issuer, receiver, amounts } = content;
  const id = documentId(content.docType, content.folio);
  let body: string;
  if (content.docType === 39) {
    body =
      `<Encabezado><IdDoc><TipoDTE>39</TipoDTE><Folio>${content.folio}</Folio><FchEmis>${content.issueDate}</FchEmis><IndServicio>3</IndServicio></IdDoc>` +
      `<Emisor><RUTEmisor>${siiRut(issuer.rut)}</RUTEmisor>${element("RznSocEmisor", cut(issuer.legalName, 100))}${element("GiroEmisor", cut(issuer.giro, 80))}${element("DirOrigen", cut(issuer.address, 70))}${element("CmnaOrigen", cut(issuer.commune, 20))}</Emisor>` +
      `<Receptor><RUTRecep>${siiRut(receiver.rut)}</RUTRecep>${element("RznSocRecep", cut(receiver.name, 100))}${element("DirRecep", cut(receiver.address, 70))}${element("CmnaRecep", cut(receiver.commune, 20))}</Receptor>` +
      `<Totales><MntNeto>${amounts.net}</MntNeto><IVA>${amounts.tax}</IVA><MntTotal>${amounts.total}</MntTotal></Totales></Encabezado>` +
      detail(grossLines(content.lines, amounts));
  } else {
    const reference = content.reference
      ? `<Referencia><NroLinRef>1</NroLinRef><TpoDocRef>${content.reference.docType}</TpoDocRef><FolioRef>${content.reference.folio}</FolioRef><FchRef>${content.reference.date}</FchRef><CodRef>1</CodRef>${element("RazonRef", cut(content.reference.reason, 90))}</Referencia>`
      : "";
    body =
      `<Encabezado><IdDoc><TipoDTE>${content.docType}</TipoDTE><Folio>${content.folio}</Folio><FchEmis>${content.issueDate}</FchEmis></IdDoc>` +
      `<Emisor><RUTEmisor>${siiRut(issuer.rut)}</RUTEmisor>${element("RznSoc", cut(issuer.legalName, 100))}${element("GiroEmis", cut(issuer.giro, 80))}<Acteco>${issuer.activityCode}</Acteco>${element("DirOrigen", cut(issuer.address, 70))}${element("CmnaOrigen", cut(issuer.commune, 20))}</Emisor>` +
      `<Receptor><RUTRecep>${siiRut(receiver.rut)}</RUTRecep>${element("RznSocRecep", cut(receiver.name, 100))}${element("GiroRecep", cut(receiver.giro, 40))}${element("DirRecep", cut(receiver.address, 70))}${element("CmnaRecep", cut(receiver.commune, 20))}</Receptor>` +
      `<Totales><MntNeto>${amounts.net}</MntNeto><TasaIVA>${amounts.taxRateBps / 100}</TasaIVA><IVA>${amounts.tax}</IVA><MntTotal>${amounts.total}</MntTotal></Totales></Encabezado>` +
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
