// A strict XML 1.0 well-formedness check for the SVGs the tests read
// (test/memory-plan.test.ts), with no dependency: one root element, matching
// tags, quoted attributes named once each, only the five predefined entities
// and character references, no '<' or bare '&' in text or attribute values,
// comments and processing instructions where XML allows them. Returns the
// element tree, or throws with the offset and what was wrong. No DTDs (an
// SVG needs none), no CDATA sections.

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** the element's own text (entities decoded), its children's excluded */
  text: string;
}

const NAME = /[A-Za-z_:][-A-Za-z0-9._:]*/y;
const SPACE = /[ \t\r\n]*/y;

export function parseXml(source: string): XmlElement {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`parseXml: ${what} at offset ${at} (…${JSON.stringify(source.slice(Math.max(0, at - 30), at + 30))}…)`);
  };
  const skipSpace = () => {
    SPACE.lastIndex = at;
    SPACE.exec(source);
    at = SPACE.lastIndex;
  };
  const name = (): string => {
    NAME.lastIndex = at;
    const m = NAME.exec(source);
    if (!m) fail('expected a name');
    at = NAME.lastIndex;
    return m![0];
  };
  const decode = (raw: string, where: string): string => {
    if (/[<]/.test(raw)) fail(`'<' in ${where}`);
    if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(raw)) fail(`a character XML does not allow in ${where}`);
    return raw.replace(/&([^;]*);|&/g, (whole, ref: string | undefined) => {
      if (ref === undefined) fail(`a bare '&' in ${where}`);
      const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
      if (ref! in named) return named[ref!]!;
      const m = /^#(?:x([0-9a-fA-F]+)|([0-9]+))$/.exec(ref!);
      if (!m) fail(`unknown entity &${ref};`);
      return String.fromCodePoint(m![1] ? parseInt(m![1], 16) : parseInt(m![2]!, 10));
    });
  };
  const misc = () => {
    for (;;) {
      skipSpace();
      if (source.startsWith('<!--', at)) {
        const end = source.indexOf('-->', at + 4);
        if (end < 0) fail('an unterminated comment');
        if (source.slice(at + 4, end).includes('--')) fail("'--' inside a comment");
        at = end + 3;
      } else if (source.startsWith('<?', at)) {
        const end = source.indexOf('?>', at + 2);
        if (end < 0) fail('an unterminated processing instruction');
        at = end + 2;
      } else return;
    }
  };
  const element = (): XmlElement => {
    if (source[at] !== '<') fail("expected '<'");
    at++;
    const tag = name();
    const attributes: Record<string, string> = {};
    for (;;) {
      const before = at;
      skipSpace();
      if (source.startsWith('/>', at)) {
        at += 2;
        return { name: tag, attributes, children: [], text: '' };
      }
      if (source[at] === '>') {
        at++;
        break;
      }
      if (at === before) fail(`expected whitespace, '>' or '/>' in <${tag}>`);
      const key = name();
      if (key in attributes) fail(`attribute ${key} twice in <${tag}>`);
      skipSpace();
      if (source[at] !== '=') fail(`expected '=' after ${key}`);
      at++;
      skipSpace();
      const quote = source[at];
      if (quote !== '"' && quote !== "'") fail(`attribute ${key} not quoted`);
      const end = source.indexOf(quote!, at + 1);
      if (end < 0) fail(`attribute ${key} not closed`);
      attributes[key] = decode(source.slice(at + 1, end), `attribute ${key}`);
      at = end + 1;
    }
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      const next = source.indexOf('<', at);
      if (next < 0) fail(`<${tag}> not closed`);
      const raw = source.slice(at, next);
      if (raw.includes(']]>')) fail("']]>' in text");
      text += decode(raw, `the text of <${tag}>`);
      at = next;
      if (source.startsWith('</', at)) {
        at += 2;
        const closing = name();
        if (closing !== tag) fail(`</${closing}> closes <${tag}>`);
        skipSpace();
        if (source[at] !== '>') fail(`expected '>' after </${closing}`);
        at++;
        return { name: tag, attributes, children, text };
      }
      if (source.startsWith('<!--', at) || source.startsWith('<?', at)) {
        misc();
        continue;
      }
      if (source.startsWith('<!', at)) fail('a CDATA section or declaration (not supported)');
      children.push(element());
    }
  };
  if (source.charCodeAt(0) === 0xfeff) at = 1;
  misc();
  if (source.startsWith('<!DOCTYPE', at)) fail('a DOCTYPE (not supported)');
  const root = element();
  misc();
  if (at !== source.length) fail('content after the root element');
  return root;
}

/** Every element of the tree, depth first (the root first). */
export function* elements(root: XmlElement): Generator<XmlElement> {
  yield root;
  for (const c of root.children) yield* elements(c);
}

/** Every text in the tree (elements' own texts, depth first). */
export const texts = (root: XmlElement): string[] => [...elements(root)].map((e) => e.text).filter((t) => t.trim() !== '');
