import { DOMParser } from '@xmldom/xmldom';

// Strict XML for SAML (docs/saml.md, "What is refused"). Every document
// from outside is checked as text before any parser sees it, then parsed
// with every parser complaint fatal, then measured:
// - no DTD at all (`<!DOCTYPE`, `<!ENTITY`, any other `<!` declaration):
//   no entity can be expanded or fetched (XXE), and no entity can make the
//   parsed text differ from what a signature covered;
// - no processing instruction but the XML declaration: xml-crypto's
//   canonicalizer turns one into text while the DOM skips it, so a signed
//   value could be read differently from how it was digested;
// - comments only where the caller allows them (metadata): inside a signed
//   message they split text nodes, the classic comment-injection trick;
// - a bounded size, nesting depth and element count, against parser and
//   canonicalizer blow-ups.

export const SAML_NS = {
  protocol: 'urn:oasis:names:tc:SAML:2.0:protocol',
  assertion: 'urn:oasis:names:tc:SAML:2.0:assertion',
  metadata: 'urn:oasis:names:tc:SAML:2.0:metadata',
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
} as const;

/** Why a document or request was refused; the message is safe to show (on the error page, in a 400). */
export class SamlRefused extends Error {
  override name = 'SamlRefused';
}

export interface XmlLimits {
  maxBytes: number;
  maxDepth: number;
  maxElements: number;
  allowComments: boolean;
}

/** Nesting of a SAML message is about ten deep; metadata about eight. */
export const MESSAGE_LIMITS: XmlLimits = { maxBytes: 64 * 1024, maxDepth: 24, maxElements: 2000, allowComments: false };
export const METADATA_LIMITS: XmlLimits = { maxBytes: 512 * 1024, maxDepth: 24, maxElements: 20_000, allowComments: true };

const XML_DECLARATION = /^\uFEFF?<\?xml\s[^?]*\?>/;

function refuseDeclarations(text: string, allowComments: boolean): void {
  const body = text.replace(XML_DECLARATION, '');
  if (/<!DOCTYPE/i.test(body) || /<!ENTITY/i.test(body)) throw new SamlRefused('document type declarations (DTD) and entities are not accepted');
  // Every other `<!`: comments (where allowed) and CDATA sections only.
  for (const match of body.matchAll(/<!/g)) {
    const rest = body.slice(match.index + 2, match.index + 9);
    if (rest.startsWith('--')) {
      if (!allowComments) throw new SamlRefused('comments are not accepted in SAML messages');
    } else if (!rest.startsWith('[CDATA[')) throw new SamlRefused('markup declarations are not accepted');
  }
  if (body.includes('<?')) throw new SamlRefused('processing instructions are not accepted');
}

/** The nesting depth of `root`, walked without recursion; throws past the limits. */
function measure(root: Element, limits: XmlLimits): void {
  const stack: Array<[Node, number]> = [[root, 1]];
  let elements = 0;
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node.nodeType !== 1) continue;
    elements += 1;
    if (depth > limits.maxDepth) throw new SamlRefused(`elements are nested deeper than ${limits.maxDepth} levels`);
    if (elements > limits.maxElements) throw new SamlRefused(`more than ${limits.maxElements} elements`);
    for (let child = node.firstChild; child; child = child.nextSibling) stack.push([child, depth + 1]);
  }
}

/**
 * `text` parsed under the rules above, or SamlRefused. The document has
 * exactly one root element, which is answered.
 */
export function parseStrictXml(text: string, limits: XmlLimits): Element {
  if (Buffer.byteLength(text, 'utf8') > limits.maxBytes) throw new SamlRefused(`larger than ${limits.maxBytes} bytes`);
  if (text.includes('\u0000')) throw new SamlRefused('contains a NUL character');
  refuseDeclarations(text, limits.allowComments);
  const fail = (message: string) => {
    throw new SamlRefused(`not well-formed XML: ${String(message).split('\n')[0]!.slice(0, 200)}`);
  };
  let doc: Document;
  try {
    doc = new DOMParser({ errorHandler: { warning: fail, error: fail, fatalError: fail } }).parseFromString(text, 'text/xml') as unknown as Document;
  } catch (err) {
    if (err instanceof SamlRefused) throw err;
    throw new SamlRefused(`not well-formed XML: ${(err as Error).message.split('\n')[0]!.slice(0, 200)}`);
  }
  const root = doc?.documentElement;
  if (!root) throw new SamlRefused('no root element');
  const roots = Array.from(doc.childNodes as unknown as ArrayLike<Node>).filter((n) => n.nodeType === 1);
  if (roots.length !== 1) throw new SamlRefused('more than one root element');
  measure(root, limits);
  return root;
}

/** The element children of `parent` named `localName` in namespace `ns`: direct children only, never a search of the tree. */
export function children(parent: Element, ns: string, localName: string): Element[] {
  const found: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 1 && (child as Element).namespaceURI === ns && (child as Element).localName === localName) found.push(child as Element);
  }
  return found;
}

/** The one direct child so named, undefined when there is none; more than one is refused. */
export function onlyChild(parent: Element, ns: string, localName: string): Element | undefined {
  const found = children(parent, ns, localName);
  if (found.length > 1) throw new SamlRefused(`more than one ${localName} in ${parent.localName}`);
  return found[0];
}

/** The text of an element holding text only (an element child is refused), trimmed. */
export function textOf(element: Element): string {
  let text = '';
  for (let child = element.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 3 || child.nodeType === 4) text += (child as CharacterData).data;
    else throw new SamlRefused(`${element.localName} must hold text only`);
  }
  return text.trim();
}

/** Is `element` the one named `localName` in `ns`? */
export function isElement(element: Element, ns: string, localName: string): boolean {
  return element.namespaceURI === ns && element.localName === localName;
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** Text or an attribute value for XML we write; characters XML 1.0 cannot hold are dropped. */
export function escapeXml(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters XML 1.0 forbids
  return value.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '').replace(/[&<>"']/g, (c) => XML_ESCAPES[c]!);
}
