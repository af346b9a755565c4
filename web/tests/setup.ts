// The test files of a worker share one page (`isolate: false`: building a page for each
// file was most of the suite's time), so each file starts from an empty one. Files that
// run in Node's own environment have no page.
if (typeof document !== 'undefined') {
  localStorage.clear();
  sessionStorage.clear();
  document.head.innerHTML = '';
  document.body.innerHTML = '';
}
