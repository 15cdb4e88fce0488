/**
 * The few pieces of RFC 5545 the feed needs: text values escaped (§3.3.11), content lines folded
 * at 75 octets (§3.1) and joined with CRLF, and instants in UTC (§3.3.5, form #2).
 */

/** A TEXT value: backslash, semicolon, comma and newline escaped; other control characters dropped (TEXT may not hold them). */
export function escapeText(value: string): string {
  return value
    .replaceAll("\r\n", "\n")
    .replaceAll("\r", "\n")
    .replaceAll(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "")
    .replaceAll("\\", "\\\\")
    .replaceAll(";", "\\;")
    .replaceAll(",", "\\,")
    .replaceAll("\n", "\\n");
}

const encoder = new TextEncoder();

/**
 * One content line folded so that no line is longer than 75 octets (the CRLF not counted): each
 * continuation starts with one space, which counts toward its 75. A fold never splits a UTF-8
 * sequence (splitting between code points keeps every line valid UTF-8).
 */
export function foldLine(line: string): string {
  if (encoder.encode(line).length <= 75) return line;
  const lines: string[] = [];
  let current = "";
  let octets = 0;
  let limit = 75;
  for (const char of line) {
    const size = encoder.encode(char).length;
    if (octets + size > limit) {
      lines.push(current);
      current = " ";
      octets = 1;
      limit = 75;
    }
    current += char;
    octets += size;
  }
  lines.push(current);
  return lines.join("\r\n");
}

/** An instant as a UTC DATE-TIME: 20260120T133000Z (seconds kept, milliseconds dropped). */
export function utcDateTime(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, "Z").replaceAll(/[-:]/g, "");
}

/** Property lines (name and already formatted value) into a calendar object: folded, CRLF after each. */
export function serialize(lines: [name: string, value: string][]): string {
  return lines.map(([name, value]) => foldLine(`${name}:${value}`) + "\r\n").join("");
}
