// pdf-lib and bwip-js are loaded at the first print: an idle server need not hold them.
import type { PDFFont, PDFPage } from "pdf-lib";
import type { SiiEnvironment } from "../../../db/schema";
import siiOffices from "./sii-offices.json";

export type PrintFormat = "letter" | "thermal";

export interface PrintedDocument {
  docType: number;
  folio: number;
  issueDate: string;
  issuedAt: Date;
  environment: SiiEnvironment;
  issuer: { rut: string; legalName: string; giro: string; address: string | null; commune: string | null };
  receiver: { rut: string; name: string | null; giro: string | null; address: string | null; commune: string | null };
  /** A quantity of 0: a line without amounts (a nota de crédito that corrects text). */
  lines: { description: string; quantity: number; unitPrice: number; total: number }[];
  /** `taxRate`: the TasaIVA the DTE carries (null on a boleta, whose prices include IVA). */
  amounts: { net: number; tax: number; total: number; taxRate: number | null };
  reference: { docType: number; folio: number; date: string; code: number } | null;
  resolution: { number: number; date: string };
  /** The TED as signed, printed as the PDF417 barcode. */
  ted: string;
}

export const DOC_TYPE_NAMES: Record<number, string> = { 33: "FACTURA ELECTRÓNICA", 39: "BOLETA ELECTRÓNICA", 61: "NOTA DE CRÉDITO ELECTRÓNICA" };

const pesos = (amount: number) => `$ ${amount.toLocaleString("es-CL", { maximumFractionDigits: 2 })}`;
const REFERENCE_CODES: Record<number, string> = { 1: "anula el documento", 2: "corrige texto", 3: "corrige montos" };

/** Upper case without accents, for matching comunas as people write them. */
const plain = (text: string) => text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toUpperCase().replace(/\s+/g, " ").trim();
const OFFICE_OF: ReadonlyMap<string, string> = new Map(Object.entries(siiOffices.offices as Record<string, string[]>).flatMap(([office, comunas]) => comunas.map((comuna) => [plain(comuna), office] as const)));

/**
 * The SII office the printed copy names under the RUT/type/folio box: the unidad of the issuer's
 * comuna (sii-offices.json); a comuna not in the table prints as written; none, nothing.
 * The DTE holds at most 20 characters of the comuna, so a cut name matches by its beginning.
 */
export function siiOfficeFor(commune: string | null): string | null {
  if (!commune?.trim()) return null;
  const key = plain(commune);
  const office = OFFICE_OF.get(key) ?? (key.length >= 20 ? [...OFFICE_OF].find(([comuna]) => comuna.startsWith(key))?.[1] : undefined);
  return office ?? commune.trim().toUpperCase();
}

/** Centimetres in PDF points. */
const cm = (value: number) => (value * 72) / 2.54;
/**
 * The timbre's printed size, as the SII's print rules bound it: at least 2 cm × 5 cm and at most
 * 4 cm × 9 cm (height × width), on letter and on 80 mm rolls alike.
 */
export const TIMBRE_BOUNDS = { minWidth: cm(5), maxWidth: cm(9), minHeight: cm(2), maxHeight: cm(4) } as const;
const dmy = (date: string) => date.split("-").reverse().join("-");

/** The TED as the SII prints it: PDF417, error-correction level 5, its bytes in ISO-8859-1. */
export async function timbrePng(ted: string): Promise<Buffer> {
  const { default: bwipjs } = await import("bwip-js/node");
  // Rows three modules high (the PDF417 default the SII's readers expect); 14 data columns keep the symbol about 2.7 times as wide as high.
  return bwipjs.toBuffer({ bcid: "pdf417", text: ted, eclevel: 5, columns: 14, scale: 3, binarytext: true } as Parameters<typeof bwipjs.toBuffer>[0]);
}

/** Lines of text that fit a width, broken at spaces. */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    const next = line ? `${line} ${word}` : word;
    if (font.widthOfTextAtSize(next, size) > width && line) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * The printed copy: letter for facturas and notas de crédito, an 80 mm roll for boletas (either
 * may be asked for). Issuer, receiver, items, totals, type and folio, and the timbre with the
 * resolution and where to verify; documents outside production say SIN VALOR LEGAL.
 */
export async function printDocument(document: PrintedDocument, format: PrintFormat): Promise<Uint8Array> {
  const { PDFDocument, StandardFonts, rgb } = await import("pdf-lib");
  const pdf = await PDFDocument.create();
  pdf.setTitle(`${DOC_TYPE_NAMES[document.docType]} N° ${document.folio}`);
  pdf.setCreator("vet-clinic-service");
  // The same document prints the same bytes: the PDF's dates are its issue, not the moment of printing.
  pdf.setCreationDate(document.issuedAt);
  pdf.setModificationDate(document.issuedAt);
  const regular = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const barcode = await pdf.embedPng(await timbrePng(document.ted));
  const thermal = format === "thermal";
  const pageWidth = thermal ? 226.77 : 612;
  const margin = thermal ? 10 : 40;
  const width = pageWidth - 2 * margin;
  const size = thermal ? 7.5 : 9.5;
  const leading = size * 1.35;
  // As wide as the SII allows and the paper holds, then narrower if that would make it too high.
  const aspect = barcode.height / barcode.width;
  const barcodeWidth = Math.min(width, TIMBRE_BOUNDS.maxWidth, TIMBRE_BOUNDS.maxHeight / aspect);
  const barcodeHeight = aspect * barcodeWidth;

  // Everything is laid out as rows first, so a thermal page is exactly as tall as its content.
  type Row = { text: string; font?: PDFFont; size?: number; align?: "left" | "right" | "center"; gap?: number; right?: string; frame?: "open" | "close"; inBox?: boolean };
  const rows: Row[] = [];
  const push = (text: string, options: Omit<Row, "text"> = {}) => {
    const font = options.font ?? regular;
    const fontSize = options.size ?? size;
    for (const line of options.right === undefined ? wrap(text, font, fontSize, width) : [text]) rows.push({ ...options, text: line });
  };
  // The framed box (RUT, type, folio), with the SII office of the issuer's comuna under it.
  rows.push({ text: "", gap: 4, frame: "open" });
  for (const line of [`R.U.T.: ${document.issuer.rut}`, DOC_TYPE_NAMES[document.docType]!, `N° ${document.folio}`]) push(line, { font: bold, size: size + 1.5, align: "center", inBox: true });
  rows.push({ text: "", gap: 4, frame: "close" });
  const office = siiOfficeFor(document.issuer.commune);
  if (office) push(`S.I.I. - ${office}`, { font: bold, align: "center", inBox: true });
  rows.push({ text: "", gap: leading / 2 });
  push(document.issuer.legalName, { font: bold });
  push(`Giro: ${document.issuer.giro}`);
  if (document.issuer.address) push([document.issuer.address, document.issuer.commune].filter(Boolean).join(", "));
  push(`Fecha de emisión: ${dmy(document.issueDate)}`);
  rows.push({ text: "", gap: leading / 2 });
  push(`Señor(es): ${document.receiver.name ?? "—"}`);
  push(`R.U.T.: ${document.receiver.rut}`);
  if (document.receiver.giro) push(`Giro: ${document.receiver.giro}`);
  if (document.receiver.address) push(`Dirección: ${[document.receiver.address, document.receiver.commune].filter(Boolean).join(", ")}`);
  if (document.reference) push(`Referencia: ${DOC_TYPE_NAMES[document.reference.docType] ?? document.reference.docType} N° ${document.reference.folio} del ${dmy(document.reference.date)} (${REFERENCE_CODES[document.reference.code] ?? document.reference.code})`);
  rows.push({ text: "", gap: leading / 2 });
  push("Detalle", { font: bold, right: "Monto" });
  for (const line of document.lines) {
    for (const text of line.description.split("\n")) push(text);
    if (line.quantity > 0) push(`  ${line.quantity} x ${pesos(line.unitPrice)}`, { right: pesos(line.total) });
  }
  rows.push({ text: "", gap: leading / 2 });
  if (document.amounts.taxRate !== null) {
    push("Monto neto", { right: pesos(document.amounts.net) });
    push(`IVA ${document.amounts.taxRate.toLocaleString("es-CL")}%`, { right: pesos(document.amounts.tax) });
  } else if (document.docType === 39) push("IVA incluido en el total", { right: pesos(document.amounts.tax) });
  push("Total", { font: bold, right: pesos(document.amounts.total) });
  if (document.environment !== "production") {
    rows.push({ text: "", gap: leading / 2 });
    push("SIN VALOR LEGAL", { font: bold, size: size + 4, align: "center" });
    push(`Documento de ${document.environment === "test" ? "prueba" : "certificación"}`, { align: "center" });
  }
  const footer: Row[] = [
    { text: "Timbre Electrónico SII", font: bold, align: "center" },
    { text: `Res. N° ${document.resolution.number} de ${document.resolution.date.slice(0, 4)}`, align: "center" },
    { text: "Verifique documento: www.sii.cl", align: "center" },
  ];
  const rowHeight = (row: Row) => row.gap ?? (row.size ?? size) * 1.35;
  const contentHeight = rows.reduce((sum, row) => sum + rowHeight(row), 0) + leading + barcodeHeight + footer.reduce((sum, row) => sum + rowHeight(row), 0);
  const pageHeight = thermal ? contentHeight + 2 * margin : 792;
  const page: PDFPage = pdf.addPage([pageWidth, pageHeight]);
  let y = pageHeight - margin;
  let frameTop = 0;
  // The box is as wide as its widest line plus a margin: at the top right of a letter page, centred on a roll.
  const boxWidth = Math.min(width, Math.max(...rows.filter((row) => row.inBox).map((row) => bold.widthOfTextAtSize(row.text, row.size ?? size))) + 24);
  const boxX = thermal ? margin + (width - boxWidth) / 2 : margin + width - boxWidth;
  const draw = (row: Row) => {
    const font = row.font ?? regular;
    const fontSize = row.size ?? size;
    if (row.frame === "open") frameTop = y;
    y -= rowHeight(row);
    if (row.frame === "close") page.drawRectangle({ x: boxX, y, width: boxWidth, height: frameTop - y, borderColor: rgb(0, 0, 0), borderWidth: 1.5 });
    if (!row.text) return;
    const textWidth = font.widthOfTextAtSize(row.text, fontSize);
    const x = row.inBox ? boxX + (boxWidth - textWidth) / 2 : row.align === "center" ? margin + (width - textWidth) / 2 : row.align === "right" ? margin + width - textWidth : margin;
    page.drawText(row.text, { x, y, font, size: fontSize, color: row.text === "SIN VALOR LEGAL" ? rgb(0.75, 0, 0) : rgb(0, 0, 0) });
    if (row.right !== undefined) page.drawText(row.right, { x: margin + width - font.widthOfTextAtSize(row.right, fontSize), y, font, size: fontSize });
  };
  rows.forEach(draw);
  y -= leading;
  // The timbre sits under the totals (letter: at the bottom left, as the SII's examples place it).
  const barcodeX = thermal ? margin + (width - barcodeWidth) / 2 : margin;
  if (!thermal) y = Math.min(y, margin + barcodeHeight + footer.length * leading + 4);
  page.drawImage(barcode, { x: barcodeX, y: y - barcodeHeight, width: barcodeWidth, height: barcodeHeight });
  y -= barcodeHeight;
  for (const row of footer) {
    const font = row.font ?? regular;
    y -= rowHeight(row);
    const textWidth = font.widthOfTextAtSize(row.text, size);
    page.drawText(row.text, { x: barcodeX + (barcodeWidth - textWidth) / 2, y, font, size });
  }
  return pdf.save();
}
