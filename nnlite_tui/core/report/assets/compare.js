/* The compare page: the data block's columns become one Tabulator table with filters. */
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('nnlite-data').textContent);
  const S = D.strings, C = D.columns, N = C.model.length;
  const TEXT = ['family', 'device', 'backend', 'precision', 'change', 'mark', 'basis', 'rounds'];
  const esc = s => String(s == null ? '' : s).replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;',
    '"': '&quot;', "'": '&#39;'}[c]));
  const rows = [];
  for (let i = 0; i < N; i++) {
    const r = {i: i};
    for (const k in C) r[k] = TEXT.includes(k) ? (C[k][i] == null ? '' : S[C[k][i]]) : C[k][i];
    r.hay = [r.model, r.family, r.device, r.backend, r.precision, r.change, r.basis].join(' ').toLowerCase();
    rows.push(r);
  }
  const BAD = ['slower', 'broken'], GOOD = ['faster', 'fixed'];
  const num = {hozAlign: 'right', sorter: 'number', sorterParams: {alignEmptyValues: 'bottom'}};
  const band = `outside [${(1 - D.threshold).toFixed(2)}, ${(1 + D.threshold).toFixed(2)}]`;
  const table = new Tabulator('#compare', {
    data: rows, index: 'i', maxHeight: '75vh', layout: 'fitDataStretch', renderVertical: 'virtual',
    placeholder: 'no pair matches the filter', initialSort: [{column: 'ratio', dir: 'desc'}],
    columns: [
      {title: 'verdict', field: 'change', width: 120, formatter: c => `<span class="flag ${BAD.includes(c.getValue()) ?
        'bad' : ''}" style="${GOOD.includes(c.getValue()) ? 'color: var(--good)' : ''}">${esc(c.getValue())}</span>`},
      {title: 'model', field: 'model', width: 220, tooltip: true},
      {title: 'family', field: 'family', width: 120},
      {title: 'device', field: 'device', width: 120, tooltip: true},
      {title: 'backend', field: 'backend', visible: false},
      {title: 'precision', field: 'precision', width: 80},
      {title: 'before ms', field: 'before', ...num},
      {title: 'after ms', field: 'after', ...num},
      {title: 'ratio after / before', field: 'ratio', ...num, headerTooltip: 'above 1: slower'},
      {title: '95% interval of the ratio', field: 'low', ...num, width: 150, headerTooltip: `a change counts when ` +
        `the whole interval lies ${band}`, formatter: c => { const d = c.getData();
          return d.low == null ? '' : `${d.low}–${d.high}`; }},
      {title: 'basis', field: 'basis', width: 100},
      {title: 'rounds before / after', field: 'rounds', width: 120},
      {title: 'rank test p', field: 'p', ...num},
    ],
  });
  const $ = id => document.getElementById(id);
  const distinct = k => Array.from(new Set(rows.map(r => r[k]).filter(Boolean))).sort();
  [['filter-change', 'change'], ['filter-family', 'family'], ['filter-device', 'device']].forEach(([id, k]) =>
    distinct(k).forEach(v => $(id).insertAdjacentHTML('beforeend', `<option value="${esc(v)}">${esc(v)}</option>`)));
  $('total').textContent = N;
  const apply = () => {
    const words = $('filter-text').value.toLowerCase().split(/\s+/).filter(Boolean);
    const ch = $('filter-change').value, fam = $('filter-family').value, dev = $('filter-device').value;
    if (!words.length && !ch && !fam && !dev) { table.clearFilter(); return; }
    table.setFilter(r => (!ch || r.change === ch) && (!fam || r.family === fam) && (!dev || r.device === dev) &&
      words.every(w => r.hay.includes(w)));
  };
  ['filter-text', 'filter-change', 'filter-family', 'filter-device'].forEach(id =>
    $(id).addEventListener(id === 'filter-text' ? 'input' : 'change', apply));
  table.on('dataFiltered', (f, shown) => { $('shown').textContent = shown.length; });
  table.on('tableBuilt', () => { $('shown').textContent = N; window.nnliteReady = performance.now(); });
})();
