  // Shared helpers; each script that includes this runs in one frame's main world.
  const SKIP_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'svg', 'SVG']);
  const TEXT_TYPES = new Set(['', 'text', 'search', 'email', 'tel', 'url', 'number', 'password',
    'date', 'datetime-local', 'month', 'time', 'week']);
  const ACTIONABLE_ROLES = new Set(['button', 'link', 'checkbox', 'radio', 'textbox', 'searchbox',
    'combobox', 'listbox', 'slider', 'spinbutton', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'treeitem']);
  const NAME_FROM_CONTENT = new Set(['button', 'link', 'heading', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'treeitem', 'checkbox', 'radio', 'switch', 'cell', 'columnheader']);

  const clean = (s, max) => {
    const t = (s || '').replace(/\s+/g, ' ').trim();
    return t.length > max ? t.slice(0, max - 1) + '\u2026' : t;
  };

  const inputType = (el) => (el.getAttribute('type') || '').toLowerCase();

  const roleOf = (el) => {
    const explicit = el.getAttribute('role');
    if (explicit && explicit.trim()) return explicit.trim().split(/\s+/)[0].toLowerCase();
    switch (el.tagName) {
      case 'A': case 'AREA': return el.hasAttribute('href') ? 'link' : null;
      case 'BUTTON': return 'button';
      case 'SUMMARY': return 'button';
      case 'INPUT': {
        const t = inputType(el);
        if (t === 'hidden') return null;
        if (t === 'checkbox') return 'checkbox';
        if (t === 'radio') return 'radio';
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return 'searchbox';
        if (['submit', 'reset', 'button', 'image', 'file', 'color'].includes(t)) return 'button';
        return el.hasAttribute('list') ? 'combobox' : 'textbox';
      }
      case 'SELECT': return (el.multiple || el.size > 1) ? 'listbox' : 'combobox';
      case 'TEXTAREA': return 'textbox';
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
      case 'IMG': return el.getAttribute('alt') ? 'img' : null;
      case 'DIALOG': return 'dialog';
      case 'NAV': return 'navigation';
      case 'MAIN': return 'main';
      case 'FORM': return 'form';
      case 'IFRAME': case 'FRAME': return 'iframe';
      default: return el.isContentEditable && el.hasAttribute('contenteditable') ? 'textbox' : null;
    }
  };

  const isActionable = (role) => role !== null && ACTIONABLE_ROLES.has(role);

  const nameOf = (el, role) => {
    const label = el.getAttribute('aria-label');
    if (label && label.trim()) return clean(label, 100);
    const labelledBy = el.getAttribute('aria-labelledby');
    if (labelledBy) {
      const root = el.getRootNode();
      const parts = labelledBy.split(/\s+/).map((id) => root.getElementById && root.getElementById(id))
        .filter(Boolean).map((node) => node.textContent);
      if (parts.length) return clean(parts.join(' '), 100);
    }
    const tag = el.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
      const t = inputType(el);
      if (tag === 'INPUT' && ['submit', 'reset', 'button'].includes(t)) {
        return clean(el.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : ''), 100);
      }
      if (tag === 'INPUT' && t === 'image') return clean(el.getAttribute('alt') || 'Submit', 100);
      if (el.labels && el.labels.length) {
        return clean(Array.from(el.labels).map((l) => l.textContent).join(' '), 100);
      }
      return clean(el.getAttribute('placeholder') || el.getAttribute('title') || '', 100);
    }
    if (tag === 'IMG') return clean(el.getAttribute('alt'), 100);
    if (tag === 'IFRAME' || tag === 'FRAME') return clean(el.getAttribute('title') || el.getAttribute('name') || '', 100);
    if (NAME_FROM_CONTENT.has(role)) {
      let text = clean(el.textContent, 100);
      if (!text) {
        const img = el.querySelector('img[alt]');
        if (img) text = clean(img.getAttribute('alt'), 100);
      }
      return text || clean(el.getAttribute('title'), 100);
    }
    return clean(el.getAttribute('title'), 100);
  };

  const isVisible = (el) => {
    if (typeof el.checkVisibility === 'function') {
      return el.checkVisibility({ checkVisibilityCSS: true });
    }
    return el.getClientRects().length > 0;
  };

  // Every element of a document and its open shadow roots, in tree order.
  const deepElements = (root, out) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    let node = walker.nextNode();
    while (node) {
      out.push(node);
      if (node.shadowRoot) deepElements(node.shadowRoot, out);
      node = walker.nextNode();
    }
    return out;
  };

  const deepActive = () => {
    let active = document.activeElement;
    while (active && active.shadowRoot && active.shadowRoot.activeElement) {
      active = active.shadowRoot.activeElement;
    }
    return active;
  };
