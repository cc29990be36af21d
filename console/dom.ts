// The console builds its views from elements, never from HTML text: a user's data is always text
// content, so nothing a record holds can become markup.

type Child = Node | string | number | false | null | undefined;
type Attributes = Record<string, string | boolean | number | EventListener | undefined>;

/** An element with attributes (`on...` are listeners; `true` an empty attribute) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === false || child === null || child === undefined) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replaces an element's children. */
export function show(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren(
    ...children
      .flat()
      .filter((c): c is Node | string => c !== false && c !== null && c !== undefined)
      .map((c) => (c instanceof Node ? c : String(c))),
  );
}

/** A labelled control: the label wraps its text and the control, so the two are tied. */
export function labelled(text: string, control: HTMLElement, className?: string): HTMLLabelElement {
  return h('label', className ? { class: className } : {}, text, control);
}

/** A table with a header row and a caption for screen readers. */
export function table(caption: string, headers: readonly string[], rows: readonly Child[][]): HTMLElement {
  // A wide table scrolls sideways in its frame: the frame takes the focus so keys scroll it too.
  return h(
    'div',
    { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption },
    h(
      'table',
      {},
      h('caption', { class: 'skip' }, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((cells) =>
          h(
            'tr',
            {},
            cells.map((cell) => h('td', {}, cell)),
          ),
        ),
      ),
    ),
  );
}

/** A file the browser saves: text made here, offered as a download. */
export function saveText(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** A number as people read it (1,234,567). */
export const count = (n: number): string => n.toLocaleString('en-US');
