import { AppError, type FieldError } from "../../../lib/errors";

/** Text in element content: the three characters XML reserves there. */
export const escapeXml = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * Text in the TED's `DD` as the SII verifies it (and LibreDTE writes it): the DD is flattened and
 * every one of the five XML specials is an entity, quotes and apostrophes included. The stored DTE,
 * its barcode and the FRMT all carry this same form.
 */
export const escapeTedText = (text: string) => escapeXml(text).replace(/"/g, "&quot;").replace(/'/g, "&apos;");

/** The entities escapeTedText and escapeXml write, read back. */
export const unescapeXml = (text: string | null) =>
  (text ?? "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");

/** An element with escaped text; nothing when the value is missing. */
export const element = (name: string, value: string | number | null | undefined) => (value === null || value === undefined || value === "" ? "" : `<${name}>${escapeXml(String(value))}</${name}>`);

/** The SII's canonical form of the TED and CAF parts: the element with the whitespace between tags removed. */
export const withoutWhitespaceBetweenTags = (xml: string) => xml.replace(/>\s+</g, "><").trim();

/** The ISO-8859-1 bytes of a string that holds only Latin-1 characters. */
export const latin1 = (text: string) => Buffer.from(text, "latin1");

/** Line breaks as one LF: CRLF and a lone CR are what other systems send for the same break. */
export const normalizeLineBreaks = (text: string) => text.replace(/\r\n?/g, "\n");

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f-\x9f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LF = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

/**
 * The control-character half of the rule, or null: single-line fields (names, giros, addresses,
 * comunas) take no control character at all; free text (an item's description) takes line
 * breaks, already normalised to LF, and nothing else below the space.
 */
export function controlCharacterProblem(value: string, multiline = false): string | null {
  if (!(multiline ? CONTROL_BUT_LF : CONTROL).test(value)) return null;
  return multiline ? "Contains control characters (only line breaks are allowed)" : "Contains control characters (tabs, line breaks and the like); write it on one line";
}

/** What is wrong with a text a DTE will carry, or null: control characters, or characters ISO-8859-1 cannot hold. */
export function dteTextProblem(value: string, multiline = false): string | null {
  if (/[^\x00-\xff]/.test(value)) return "Contains characters ISO-8859-1 cannot hold (the SII's encoding); use Latin letters, digits and punctuation";
  return controlCharacterProblem(value, multiline);
}

/**
 * Refuses, naming each field (422), text a DTE cannot carry as entered: control characters, or
 * characters outside ISO-8859-1. Nothing is changed silently, since the printed and signed text
 * must be what was entered. Paths listed in `multiline` may hold line breaks.
 */
export function requireDteText(fields: Record<string, string | null | undefined>, multiline: string[] = []): void {
  const refused: FieldError[] = [];
  for (const [path, value] of Object.entries(fields)) {
    const problem = value ? dteTextProblem(value, multiline.includes(path)) : null;
    if (problem) refused.push({ path, message: problem });
  }
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

/**
 * Text cut to the schema's maximum length (the SII's schemas bound every name and address),
 * counted in characters before escaping, as the schema counts them; never ending in a space.
 */
export const cut = (text: string | null | undefined, max: number) => (text ? text.trim().slice(0, max).trimEnd() : text ?? null);

/** A RUT as the SII's XML writes it: no dots, upper-case K (12345678-5). */
export const siiRut = (rut: string) => rut.replace(/\./g, "").toUpperCase();
