(el, wanted) => {
  // The option of a select that ``wanted`` names: its value first, then its label (any case).
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  const options = Array.from(el.options);
  let index = options.findIndex((o) => o.value === wanted);
  if (index < 0) index = options.findIndex((o) => norm(o.label) === norm(wanted));
  const option = index >= 0 ? options[index] : null;
  return {
    index,
    disabled: !!option && (option.disabled || (option.parentElement.tagName === 'OPTGROUP' && option.parentElement.disabled)),
    options: options.slice(0, 30).map((o) => o.label + (o.value !== o.label ? ' (' + o.value + ')' : '')),
    more: Math.max(0, options.length - 30),
  };
}
