import type { PDFFont, PDFPage } from "pdf-lib";

// pdf-lib and bwip-js are loaded at the first print: an idle server need not hold them.
import type { SiiEnvironment } from "../../../db/schema";

export type PrintFormat = "letter" | "thermal";

export interface PrintedDocument {
  docType: number;
  folio: number;
  issueDate: string;
  issuedAt: Date;
  environment: SiiEnvironment;
  issuer: { rut: string; legalName: string; giro: string; address: string | null; commune: string | null };
  receiver: { rut: string; name: string | null; giro: string | null; address: string | null; commune: string | null };
  lines: { description: string; quantity: number; unitPrice: number; total: number }[];
  amounts: { net: number; tax: number; total: number };
  reference: { docType: number; folio: number; date: string } | null;
  resolution: { number: number; date: string };
  /** The TED as signed, printed as the PDF417 barcode. */
  ted: string;
}

export const DOC_TYPE_NAMES: Record<number, string> = { 33: "FACTURA ELECTRÓNICA", 39: "BOLETA ELECTRÓNICA", 61: "NOTA DE CRÉDITO ELECTRÓNICA" };

const pesos = (amount: number) => `$ ${amount.toLocaleString("es-CL")}`;
const dmy = (date: string) => date.split("-").reverse().join("-");

/** The TED as the SII prints it: PDF417, error-correction level 5, its bytes in ISO-8859-1. */
export async function timbrePng(ted: string): Promise<Buffer> {
  const { default: bwipjs } = await import("bwip-js/node");
  return bwipjs.toBuffer({ bcid: "pdf417", text: ted, eclevel: 5, columns: 14, scale: 2, height: 2, binarytext: true } as Parameters<typeof bwipjs.toBuffer>[0]);
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
  const barcodeWidth = Math.min(width, thermal ? width : 260);
  const barcodeHeight = (barcode.height / barcode.width) * barcodeWidth;

  // Everything is laid out as rows first, so a thermal page is exactly as tall as its content.
  type Row = { text: string; font?: PDFFont; size?: number; align?: "left" | "right" | "center"; gap?: number; right?: string };
  const rows: Row[] = [];
  const push = (text: string, options: Omit<Row, "text"> = {}) => {
    const font = options.font ?? regular;
    const fontSize = options.size ?? size;
    for (const line of options.right === undefined ? wrap(text, font, fontSize, width) : [text]) rows.push({ ...options, text: line });
  };
  const box = [`R.U.T.: ${document.issuer.rut}`, DOC_TYPE_NAMES[document.docType]!, `N° ${document.folio}`, `S.I.I. - ${(document.issuer.commune ?? "").toUpperCase()}`];
  for (const line of box) push(line, { font: bold, size: size + 1.5, align: "center" });
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
  if (document.reference) push(`Referencia: ${DOC_TYPE_NAMES[document.reference.docType] ?? document.reference.docType} N° ${document.reference.folio} del ${dmy(document.reference.date)} (anula el documento)`);
  rows.push({ text: "", gap: leading / 2 });
  push("Detalle", { font: bold, right: "Monto" });
  for (const line of document.lines) {
    push(line.description);
    push(`  ${line.quantity} x ${pesos(line.unitPrice)}`, { right: pesos(line.total) });
  }
  rows.push({ text: "", gap: leading / 2 });
  if (document.docType !== 39) {
    push("Monto neto", { right: pesos(document.amounts.net) });
    push("IVA 19%", { right: pesos(document.amounts.tax) });
  } else push("IVA incluido en el total", { right: pesos(document.amounts.tax) });
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
  const draw = (row: Row) => {
    const font = row.font ?? regular;
    const fontSize = row.size ?? size;
    y -= rowHeight(row);
    if (!row.text) return;
    const textWidth = font.widthOfTextAtSize(row.text, fontSize);
    const x = row.align === "center" ? margin + (width - textWidth) / 2 : row.align === "right" ? margin + width - textWidth : margin;
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
