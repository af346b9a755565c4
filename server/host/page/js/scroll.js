// world: main
// Scrolls what a person's wheel would scroll at the middle of the viewport, and says where it
// got to. Main world: it acts as the wheel does; no safety decision reads its answer.
(/** @param {[number, number]} delta */
([dx, dy]) => {
  /** @param {Element} el */
  const canScroll = (el) => {
    const style = getComputedStyle(el);
    const y = dy !== 0 && /(auto|scroll)/.test(style.overflowY) && el.scrollHeight > el.clientHeight;
    const x = dx !== 0 && /(auto|scroll)/.test(style.overflowX) && el.scrollWidth > el.clientWidth;
    return x || y;
  };
  /** @type {Element} */
  let target = document.scrollingElement || document.documentElement;
  let el = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
  for (; el && el !== document.body && el !== document.documentElement; el = el.parentElement) {
    if (canScroll(el)) { target = el; break; }
  }
  const before = [target.scrollLeft, target.scrollTop];
  target.scrollBy({ left: dx, top: dy, behavior: 'instant' });
  const after = [target.scrollLeft, target.scrollTop];
  return {
    moved: before[0] !== after[0] || before[1] !== after[1],
    x: Math.round(after[0]),
    y: Math.round(after[1]),
    atEnd: target.scrollTop + target.clientHeight >= target.scrollHeight - 2,
    atStart: target.scrollTop <= 0,
  };
})
