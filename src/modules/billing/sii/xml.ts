import { AppError } from "../../../lib/errors";

/** Text in element content: the three characters XML reserves there. */
export const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** An element with escaped text; nothing when the value is missing. */
export const element = (name: string, value: string | number | null | undefined) => (value === null || value === undefined || value === "" ? "" : `<${name}>${escapeXml(String(value))}</${name}>`);

/** The SII's canonical form of the TED and CAF parts: the element with the whitespace between tags removed. */
export const withoutWhitespaceBetweenTags = (xml: string) => xml.replace(/>\s+</g, "><").trim();

/** The ISO-8859-1 bytes of a string that holds only Latin-1 characters. */
export const latin1 = (text: string) => Buffer.from(text, "latin1");

// eslint-disable-next-line no-control-regex
const NOT_LATIN1_OR_CONTROL = /[^\t\n\r\x20-\x7e\xa0-\xff]/;

/**
 * DTEs are ISO-8859-1: text it cannot hold (emoji, CJK, curly quotes…) is refused naming the
 * field rather than changed silently, since the printed and signed text must be what was entered.
 */
export function requireLatin1(fields: Record<string, string | null | undefined>): void {
  const refused = Object.entries(fields)
    .filter(([, value]) => value && NOT_LATIN1_OR_CONTROL.test(value))
    .map(([path]) => ({ path, message: "Contains characters ISO-8859-1 cannot hold (the SII's encoding); use Latin letters, digits and punctuation" }));
  if (refused.length) throw AppError.validation(refused);
}

/** The text of the first `<name>` element inside `xml`, or null. */
export function textOf(xml: string, name: string): string | null {
  const match = new RegExp(`<${name}(?:\\s[^>]*)?>([^<]*)</${name}>`).exec(xml);
  return match ? match[1]!.trim() : null;
}

/** The first `<name …>…</name>` element of `xml`, as written, or null. */
export function elementOf(xml: string, name: string): string | null {
  const match = new RegExp(`<${name}(?:\\s[^>]*)?>[\\s\\S]*?</${name}>`).exec(xml);
  return match ? match[0] : null;
}

/** Cuts text to the schema's maximum length (the SII's schemas bound every name and address). */
export const cut = (text: string | null | undefined, max: number) => (text ? text.trim().slice(0, max) : text ?? null);

/** A RUT as the SII's XML writes it: no dots, upper-case K (12345678-5). */
export const siiRut = (rut: string) => rut.replace(/\./g, "").toUpperCase();
