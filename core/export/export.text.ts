/** Text escaping of the export formats: XML 1.0 character data and attributes, RFC 4180 CSV fields. */

/**
 * Characters XML 1.0 does not allow anywhere, even escaped (§2.2 Char): C0 controls but tab, LF
 * and CR, U+FFFE, U+FFFF and lone surrogates. A device name or alert text may hold them; they
 * are dropped, so the file stays well-formed.
 */
const NOT_XML_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const XML_ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text safe inside an XML element or a quoted attribute value. */
export function escapeXml(text: string): string {
  return text.replace(NOT_XML_CHAR, '').replace(/[&<>"']/g, (c) => XML_ENTITY[c]);
}

/** One CSV field (RFC 4180 §2): quoted, with quotes doubled, when it holds a quote, comma, CR or LF. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
